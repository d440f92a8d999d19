// The monitoring shipped with claimkit (deploy/monitoring and the chart's copy): the dashboard and the
// alert rules name only metrics the controller and the webhook export, the rule file has the alerts
// docs/operate.md explains, and the chart's templated rule renders the same rules with its default
// values. `promtool check rules` and `promtool check metrics` run in e2e (apps/e2e/src/helm/chart.test.ts,
// apps/e2e/src/node/chart-install.test.ts), where promtool is built.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { metricNames } from '@claimkit/core/metrics';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CHART_DIR } from '../helm/chart.ts';
import { CHART_DASHBOARD } from '../helm/monitoring.ts';
import { DATASOURCE_UID } from './dashboard.ts';
import { exportedMetricNames } from './exported.ts';
import { DASHBOARD_FILE, RULE_FILE } from './files.ts';
import { prometheusRule, RULE_DEFAULTS, type RuleGroup } from './rules.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (p: string) => readFileSync(join(root, p), 'utf8');

type Target = { expr: string; refId: string; datasource: { uid: string }; legendFormat: string };
type Panel = {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
};
type Variable = {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { uid: string };
};
type Dashboard = { schemaVersion: number; uid: string; panels: Panel[]; templating: { list: Variable[] } };

const dashboard = JSON.parse(read(DASHBOARD_FILE)) as Dashboard;
const ruleObject = parse(read(RULE_FILE)) as ReturnType<typeof prometheusRule>;
const groups = ruleObject.spec.groups as RuleGroup[];

/** Every PromQL expression of the dashboard: its panels' targets and its query variables. */
function dashboardExprs(): { where: string; expr: string }[] {
  const out = dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr })),
  );
  for (const v of dashboard.templating.list) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : v.query.query;
    // label_values(<selector>, <label>): the selector is PromQL, the label is not a metric.
    const m = /^label_values\((.*),\s*\w+\)$/.exec(q);
    if (!m) throw new Error(`variable ${v.name}: not a label_values() query: ${q}`);
    out.push({ where: `variable ${v.name}`, expr: m[1]! });
  }
  return out;
}
const ruleExprs = () =>
  groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));

describe('the metrics the queries may name', () => {
  it("are the controller's and the webhook's own lists, SLIs and controller-runtime names included", () => {
    const exported = exportedMetricNames();
    for (const name of [
      'claimkit_reconcile_total',
      'claimkit_webhook_requests_total',
      'claimkit_podclaim_bind_duration_seconds',
      'controller_runtime_reconcile_total',
      'workqueue_depth',
      'process_resident_memory_bytes',
      'controller_runtime_webhook_latency_seconds',
    ])
      expect(exported.has(name), name).toBe(true);
  });
});

describe('the Grafana dashboard (deploy/monitoring/claimkit-dashboard.json)', () => {
  it('names only metrics the controller and the webhook export, in every query', () => {
    const exported = exportedMetricNames();
    const exprs = dashboardExprs();
    expect(exprs.length).toBeGreaterThan(40);
    for (const { where, expr } of exprs) {
      const names = metricNames(expr);
      expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const n of names)
        expect(exported.has(n), `${where} names ${n}, which nothing exports: ${expr}`).toBe(true);
    }
  });

  it("shows every claimkit SLI and the controller's, the webhook's and the processes' health", () => {
    const shown = new Set(dashboardExprs().flatMap((e) => metricNames(e.expr)));
    for (const m of [
      'claimkit_podclaim_bind_duration_seconds',
      'claimkit_podclaims_pending',
      'claimkit_podclaim_oldest_pending_seconds',
      'claimkit_pool_pods',
      'claimkit_pool_headroom_pods',
      'claimkit_pool_target_idle',
      'claimkit_pool_binds_total',
      'claimkit_pool_releases_total',
      'controller_runtime_reconcile_total',
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_time_seconds',
      'workqueue_depth',
      'claimkit_leader',
      'claimkit_capture_duration_seconds',
      'claimkit_capture_takeovers_total',
      'claimkit_leader_takeovers_total',
      'claimkit_fenced_refusals_total',
      'claimkit_doctor_findings',
      'claimkit_webhook_requests_total',
      'claimkit_webhook_request_duration_seconds',
      'process_resident_memory_bytes',
      'process_cpu_seconds_total',
    ]) {
      expect(shown.has(m), m).toBe(true);
    }
  });

  it('is a Grafana dashboard (schemaVersion 39+) on a Prometheus datasource variable, with job, namespace and pool variables', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect(vars.get('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const name of ['job', 'namespace', 'pool']) {
      expect(vars.get(name)?.type, name).toBe('query');
      expect(vars.get(name)?.datasource?.uid, name).toBe(DATASOURCE_UID);
    }
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels.filter((x) => x.type !== 'row')) {
      expect(p.datasource?.uid, p.title).toBe(DATASOURCE_UID);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) expect(t.datasource.uid, p.title).toBe(DATASOURCE_UID);
      // Pool panels follow the namespace and pool variables.
      for (const t of p.targets ?? []) {
        if (/claimkit_(pool_|podclaims_pending|podclaim_)/.test(t.expr)) {
          expect(t.expr, p.title).toContain('namespace=~"$namespace", pool=~"$pool"');
        }
      }
    }
  });

  it('lays its panels out on the 24-column grid without overlaps', () => {
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x + w, p.title).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++)
        for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i},${j}`), `${p.title} overlaps at ${i},${j}`).toBe(false);
          cells.add(`${i},${j}`);
        }
    }
  });

  it("is the chart's dashboard byte for byte", () => {
    expect(read(`${CHART_DIR}/${CHART_DASHBOARD}`)).toBe(read(DASHBOARD_FILE));
  });
});

describe('the alert rules (deploy/monitoring/prometheus-rule.yaml)', () => {
  const alerts = groups.flatMap((g) => g.rules);

  it('parse as a PrometheusRule with the alerts docs/operate.md explains', () => {
    expect(ruleObject).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' });
    expect(alerts.map((a) => a.alert).sort()).toEqual([
      'ClaimkitBindLatencyHigh',
      'ClaimkitClaimsPendingTooLong',
      'ClaimkitDoctorFindings',
      'ClaimkitNoLeader',
      'ClaimkitPoolExhausted',
      'ClaimkitReconcileErrors',
      'ClaimkitWebhookErrors',
    ]);
    const doc = read('docs/operate.md');
    const anchors = new Set(
      [...doc.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const a of alerts) {
      expect(a.labels.severity, a.alert).toMatch(/^(warning|critical)$/);
      expect(a.for, a.alert).toMatch(/^(\d+(ms|s|m|h|d|w|y))+$/);
      expect(a.annotations.summary.length, a.alert).toBeGreaterThan(10);
      const anchor = a.annotations.runbook_url.split('#')[1]!;
      expect(anchors.has(anchor), `${a.alert}: docs/operate.md has no heading #${anchor}`).toBe(true);
      expect(doc, `docs/operate.md names ${a.alert}`).toContain(a.alert);
    }
  });

  it('name only metrics the controller and the webhook export', () => {
    const exported = exportedMetricNames();
    for (const { where, expr } of ruleExprs()) {
      const names = metricNames(expr);
      expect(names.length, where).toBeGreaterThan(0);
      for (const n of names)
        expect(exported.has(n), `${where} names ${n}, which nothing exports: ${expr}`).toBe(true);
    }
  });

  it("are what the chart's template renders with its default values", () => {
    const template = read(`${CHART_DIR}/templates/monitoring-prometheusrule.yaml`);
    const values = parse(read(`${CHART_DIR}/values.yaml`)) as {
      monitoring: { prometheusRule: Record<string, unknown> };
    };
    expect(values.monitoring.prometheusRule).toMatchObject({ enabled: false, ...RULE_DEFAULTS });
    // What Helm does to this template: `{{`...`}}` literals, the values, the if/with blocks.
    const rendered = template
      .replace(/\{\{`(.*?)`\}\}/g, '$1')
      .replace(/\{\{ \.Values\.monitoring\.prometheusRule\.(\w+) \}\}/g, (_m, k: string) =>
        String(values.monitoring.prometheusRule[k]),
      )
      .replace(/\{\{ \.Release\.Namespace \}\}/g, 'claimkit-system')
      .replace(/^ *\{\{-.*\}\}\n/gm, '');
    const [doc] = parseAllDocuments(rendered).map((d) => d.toJS());
    expect(doc.spec).toEqual(JSON.parse(JSON.stringify(prometheusRule().spec)));
  });
});
