// The chart's optional monitoring (monitoring.* values, all off by default), rendered with the real
// `helm`: ServiceMonitors or PodMonitors for the controller and the webhook, the PrometheusRule,
// whose rule groups `promtool check rules` accepts and whose alerts fire (`promtool test rules`) on the
// series they are for and not on others, and the Grafana dashboard ConfigMap carrying
// deploy/monitoring/claimkit-dashboard.json. (The live controller's and webhook's /metrics are
// checked with `promtool check metrics` in node/chart-install.test.ts.)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../harness/paths.ts';
import { checkRules, dashboardAsRules, type RuleGroups, runTool } from './monitoring.ts';
import { parseRendered, type RenderedObject, runHelm } from './subchart.ts';

const chart = join(repoRoot, 'deploy/helm/claimkit');
const scratch = mkdtempSync(join(tmpdir(), 'claimkit-monitoring-test-'));
let helm = '';
let promtool = '';

const MONITORING_KINDS = ['ServiceMonitor', 'PodMonitor', 'PrometheusRule'];

async function template(...set: string[]): Promise<RenderedObject[]> {
  const r = await runHelm(helm, [
    'template',
    'claimkit',
    chart,
    '--namespace',
    'claimkit-system',
    ...set.flatMap((s) => ['--set', s]),
  ]);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseRendered(r.stdout);
}

type Endpoint = {
  port: string;
  path: string;
  scheme: string;
  honorLabels: boolean;
  interval?: string;
  tlsConfig?: Record<string, unknown>;
};
type Monitor = RenderedObject & {
  metadata: { labels: Record<string, string> };
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { matchNames: string[] };
    endpoints?: Endpoint[];
    podMetricsEndpoints?: Endpoint[];
  };
};
const named = (objs: RenderedObject[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata.name === name) as Monitor;

describe('the monitoring the chart ships (monitoring.*)', () => {
  beforeAll(() => {
    const builtHelm = inject('claimkitHelm');
    if (!builtHelm?.path)
      throw new Error(builtHelm?.error ?? 'no helm: run the e2e project (global-setup.ts builds it)');
    helm = builtHelm.path;
    const builtPromtool = inject('claimkitPromtool');
    if (!builtPromtool?.path)
      throw new Error(builtPromtool?.error ?? 'no promtool: run the e2e project (global-setup.ts builds it)');
    promtool = builtPromtool.path;
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('is off by default: no monitor, rule or dashboard; lint passes with everything on', async () => {
    const off = await template();
    expect(off.filter((o) => MONITORING_KINDS.includes(o.kind)).map((o) => o.kind)).toEqual([]);
    expect(off.filter((o) => o.metadata.name === 'claimkit-dashboard')).toEqual([]);
    const all = [
      'monitoring.serviceMonitor.enabled=true',
      'monitoring.podMonitor.enabled=true',
      'monitoring.prometheusRule.enabled=true',
      'monitoring.dashboard.enabled=true',
    ];
    const lint = await runHelm(helm, ['lint', '--strict', chart, ...all.flatMap((s) => ['--set', s])]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    const on = await template(...all);
    expect(on.length).toBe(off.length + 6);
  });

  it('ServiceMonitors and PodMonitors scrape each component in the release namespace, keeping the metrics labels (honorLabels), the webhook over TLS', async () => {
    for (const [key, kind, list] of [
      ['serviceMonitor', 'ServiceMonitor', 'endpoints'],
      ['podMonitor', 'PodMonitor', 'podMetricsEndpoints'],
    ] as const) {
      const objs = await template(
        `monitoring.${key}.enabled=true`,
        `monitoring.${key}.labels.release=kube-prometheus-stack`,
        `monitoring.${key}.interval=15s`,
      );
      const ctl = named(objs, kind, 'claimkit-controller');
      const wh = named(objs, kind, 'claimkit-webhook');
      for (const [m, component] of [
        [ctl, 'controller'],
        [wh, 'webhook'],
      ] as const) {
        expect(m.metadata.namespace).toBe('claimkit-system');
        expect(m.metadata.labels.release).toBe('kube-prometheus-stack');
        expect(m.spec.selector.matchLabels).toEqual({
          'app.kubernetes.io/name': 'claimkit',
          'app.kubernetes.io/component': component,
        });
        expect(m.spec.namespaceSelector.matchNames).toEqual(['claimkit-system']);
        const [ep] = m.spec[list]!;
        expect(ep).toMatchObject({ path: '/metrics', honorLabels: true, interval: '15s' });
      }
      expect(ctl.spec[list]![0]).toMatchObject({ port: 'metrics', scheme: 'http' });
      // With cert-manager (the default): the CA of the webhook's Secret, the Service's name.
      expect(wh.spec[list]![0]).toMatchObject({
        port: 'https',
        scheme: 'https',
        tlsConfig: {
          serverName: 'claimkit-webhook.claimkit-system.svc',
          ca: { secret: { name: 'claimkit-webhook-tls', key: 'ca.crt' } },
        },
      });
      const noCm = named(
        await template(
          `monitoring.${key}.enabled=true`,
          'webhook.certManager.enabled=false',
          'webhook.caBundle=Q0E=',
        ),
        kind,
        'claimkit-webhook',
      );
      expect(noCm.spec[list]![0]!.tlsConfig).toEqual({ insecureSkipVerify: true });
      const own = named(
        await template(`monitoring.${key}.enabled=true`, 'monitoring.webhookTLSConfig.serverName=wh.example'),
        kind,
        'claimkit-webhook',
      );
      expect(own.spec[list]![0]!.tlsConfig).toEqual({ serverName: 'wh.example' });
      // A component off: no monitor for it.
      const noWebhook = await template(`monitoring.${key}.enabled=true`, 'webhook.enabled=false');
      expect(noWebhook.filter((o) => o.kind === kind).map((o) => o.metadata.name)).toEqual([
        'claimkit-controller',
      ]);
    }
  });

  it('the dashboard ConfigMap carries deploy/monitoring/claimkit-dashboard.json, labelled for the Grafana sidecar', async () => {
    const objs = await template(
      'monitoring.dashboard.enabled=true',
      'monitoring.dashboard.annotations.grafana_folder=Platform',
    );
    const cm = objs.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === 'claimkit-dashboard',
    ) as RenderedObject & {
      metadata: { labels: Record<string, string> };
      data: Record<string, string>;
    };
    expect(cm.metadata.namespace).toBe('claimkit-system');
    expect(cm.metadata.labels.grafana_dashboard).toBe('1');
    expect(cm.metadata.annotations).toEqual({ grafana_folder: 'Platform' });
    const file = readFileSync(join(repoRoot, 'deploy/monitoring/claimkit-dashboard.json'), 'utf8');
    expect(JSON.parse(cm.data['claimkit.json']!)).toEqual(JSON.parse(file));
    const elsewhere = await template(
      'monitoring.dashboard.enabled=true',
      'monitoring.dashboard.namespace=grafana',
    );
    expect(elsewhere.find((o) => o.metadata.name === 'claimkit-dashboard')?.metadata.namespace).toBe(
      'grafana',
    );
  });

  it('promtool checks the PrometheusRule, and each alert fires on the series it is for and not on others', async () => {
    const objs = await template(
      'monitoring.prometheusRule.enabled=true',
      'monitoring.prometheusRule.labels.release=prom',
    );
    const rule = objs.find((o) => o.kind === 'PrometheusRule') as RenderedObject & {
      metadata: { labels: Record<string, string> };
      spec: { groups: RuleGroups };
    };
    expect(rule.metadata.labels.release).toBe('prom');
    const [check, test] = await checkRules(promtool, scratch, rule.spec.groups);
    expect(check!.code, check!.stdout + check!.stderr).toBe(0);
    expect(check!.stdout).toContain('SUCCESS: 7 rules found');
    expect(test!.code, test!.stdout + test!.stderr).toBe(0);
    // The rendered annotations are Prometheus templates again (Helm left them alone).
    const pending = rule.spec.groups
      .flatMap((g) => g.rules)
      .find((r) => r.alert === 'ClaimkitClaimsPendingTooLong');
    expect(pending?.annotations?.summary).toContain('{{ $labels.pool }}');
  });

  it('takes the thresholds from values (promtool still accepts the rules), and refuses bad ones', async () => {
    const objs = await template(
      'monitoring.prometheusRule.enabled=true',
      'monitoring.prometheusRule.pendingSeconds=60',
      'monitoring.prometheusRule.exhaustedFor=90s',
      'monitoring.prometheusRule.webhookErrorRatio=0.2',
    );
    const rules = (
      objs.find((o) => o.kind === 'PrometheusRule') as RenderedObject & { spec: { groups: RuleGroups } }
    ).spec.groups;
    const byName = new Map(
      rules.flatMap((g) => g.rules).map((r) => [r.alert, r as { expr: string; for: string }]),
    );
    expect(byName.get('ClaimkitClaimsPendingTooLong')?.expr).toMatch(/ > 60$/);
    expect(byName.get('ClaimkitPoolExhausted')?.for).toBe('90s');
    expect(byName.get('ClaimkitWebhookErrors')?.expr).toMatch(/ > 0\.2$/);
    const dir = mkdtempSync(join(scratch, 'set-'));
    const [check] = await checkRules(promtool, dir, rules);
    expect(check!.code, check!.stdout + check!.stderr).toBe(0);
    for (const bad of [
      'monitoring.prometheusRule.exhaustedFor=soon',
      'monitoring.prometheusRule.webhookErrorRatio=2',
      'monitoring.prometheusRule.pendingSeconds=-1',
      'monitoring.serviceMonitor.enable=true',
      'monitoring.podMonitor.interval=often',
    ]) {
      const r = await runHelm(helm, ['template', 'claimkit', chart, '--set', bad]);
      expect(r.code, bad).not.toBe(0);
      expect(r.stderr, bad).toMatch(/values don't meet the specifications of the schema/);
    }
  });

  it('every query of the dashboard is PromQL Prometheus parses (promtool check rules, as recording rules)', async () => {
    const groups = dashboardAsRules();
    expect(groups[0]!.rules.length).toBeGreaterThan(40);
    const file = join(scratch, 'dashboard-rules.json');
    writeFileSync(file, JSON.stringify({ groups }));
    const r = await runTool(promtool, ['check', 'rules', file]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });
});
