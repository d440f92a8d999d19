// The monitoring the chart ships, checked with promtool (built by apps/e2e/controlplane/build-promtool.sh):
// the rule groups of the rendered PrometheusRule (`promtool check rules`, and `promtool test rules`
// with series for which each alert must fire or stay quiet), a live /metrics exposition (`promtool
// check metrics`), and the metric names the dashboard and the rules query (deploy/monitoring).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricNames } from '@claimkit/core/metrics';
import { loadYaml } from '../harness/index.ts';
import { repoRoot } from '../harness/paths.ts';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool with `input` on stdin (in `cwd`); resolves with its exit code and output (never rejects on exit != 0). */
export function runTool(bin: string, args: string[], input?: string, cwd?: string): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

type Rule = { alert?: string; record?: string; expr: string; annotations?: Record<string, string> };
export type RuleGroups = { name: string; rules: Rule[] }[];

/**
 * `promtool check rules` on `groups` (a Prometheus rule file: JSON is YAML), then `promtool test
 * rules` of ALERT_TESTS on the same rules without their annotations (the tests hold the expressions
 * and durations; `check rules` already parsed the annotations' templates).
 */
export async function checkRules(promtool: string, dir: string, groups: RuleGroups): Promise<ToolResult[]> {
  const rules = join(dir, 'claimkit-rules.json');
  writeFileSync(rules, JSON.stringify({ groups }));
  const check = await runTool(promtool, ['check', 'rules', rules]);
  const bare = join(dir, 'claimkit-rules-bare.json');
  writeFileSync(
    bare,
    JSON.stringify({
      groups: groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations, ...r }) => r) })),
    }),
  );
  const tests = join(dir, 'claimkit-rules-test.json');
  writeFileSync(tests, JSON.stringify(alertTests(bare)));
  const test = await runTool(promtool, ['test', 'rules', tests]);
  return [check, test];
}

const pool = (pool: string) => `namespace="team-a",pool="${pool}"`;

/**
 * For each alert, series on which it must fire (with which labels, at which time) and series on
 * which it must not, with the chart's default thresholds (values.yaml).
 */
export function alertTests(ruleFile: string) {
  return {
    rule_files: [ruleFile],
    evaluation_interval: '1m',
    tests: [
      {
        name: 'a claim pending over 300 s alerts after 1m; a pool whose oldest waits 10 s does not',
        interval: '1m',
        input_series: [
          { series: `claimkit_podclaim_oldest_pending_seconds{${pool('warm')}}`, values: '0+60x10' },
          { series: `claimkit_podclaim_oldest_pending_seconds{${pool('quick')}}`, values: '10x10' },
        ],
        alert_rule_test: [
          { eval_time: '5m', alertname: 'ClaimkitClaimsPendingTooLong', exp_alerts: [] },
          {
            eval_time: '8m',
            alertname: 'ClaimkitClaimsPendingTooLong',
            exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'team-a', pool: 'warm' } }],
          },
        ],
      },
      {
        name: 'a pool without headroom and with claims pending alerts after 5m; one without pending claims does not',
        interval: '1m',
        input_series: [
          { series: `claimkit_pool_headroom_pods{${pool('warm')}}`, values: '0x20' },
          { series: `claimkit_podclaims_pending{${pool('warm')}}`, values: '2x20' },
          { series: `claimkit_pool_headroom_pods{${pool('full')}}`, values: '0x20' },
          { series: `claimkit_podclaims_pending{${pool('full')}}`, values: '0x20' },
          { series: `claimkit_pool_headroom_pods{${pool('roomy')}}`, values: '5x20' },
          { series: `claimkit_podclaims_pending{${pool('roomy')}}`, values: '3x20' },
        ],
        alert_rule_test: [
          { eval_time: '3m', alertname: 'ClaimkitPoolExhausted', exp_alerts: [] },
          {
            eval_time: '10m',
            alertname: 'ClaimkitPoolExhausted',
            exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'team-a', pool: 'warm' } }],
          },
        ],
      },
      {
        name: 'a pool whose claims bind at p99 near 60 s alerts; one binding within 1 s does not',
        interval: '1m',
        input_series: [
          {
            series: `claimkit_podclaim_bind_duration_seconds_bucket{${pool('slow')},le="1"}`,
            values: '0x40',
          },
          {
            series: `claimkit_podclaim_bind_duration_seconds_bucket{${pool('slow')},le="60"}`,
            values: '0+10x40',
          },
          {
            series: `claimkit_podclaim_bind_duration_seconds_bucket{${pool('slow')},le="+Inf"}`,
            values: '0+10x40',
          },
          {
            series: `claimkit_podclaim_bind_duration_seconds_bucket{${pool('fast')},le="1"}`,
            values: '0+10x40',
          },
          {
            series: `claimkit_podclaim_bind_duration_seconds_bucket{${pool('fast')},le="60"}`,
            values: '0+10x40',
          },
          {
            series: `claimkit_podclaim_bind_duration_seconds_bucket{${pool('fast')},le="+Inf"}`,
            values: '0+10x40',
          },
        ],
        alert_rule_test: [
          {
            eval_time: '30m',
            alertname: 'ClaimkitBindLatencyHigh',
            exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'team-a', pool: 'slow' } }],
          },
        ],
      },
      {
        name: 'no replica leading (each standby exports 0) alerts after 2m; one leader does not',
        interval: '1m',
        input_series: [
          { series: 'claimkit_leader{instance="a"}', values: '1 1 1 0 0 0 0 0 0 0 0' },
          { series: 'claimkit_leader{instance="b"}', values: '0x10' },
        ],
        alert_rule_test: [
          { eval_time: '2m', alertname: 'ClaimkitNoLeader', exp_alerts: [] },
          { eval_time: '4m', alertname: 'ClaimkitNoLeader', exp_alerts: [] },
          {
            eval_time: '8m',
            alertname: 'ClaimkitNoLeader',
            exp_alerts: [{ exp_labels: { severity: 'critical' } }],
          },
        ],
      },
      {
        name: 'sharded: one of two shards without a leader alerts; both led does not',
        interval: '1m',
        input_series: [
          { series: 'claimkit_leader{instance="a",shard="0"}', values: '1x10' },
          { series: 'claimkit_leader{instance="b",shard="1"}', values: '1 1 1 0 0 0 0 0 0 0 0' },
          { series: 'claimkit_leader{instance="c",shard="1"}', values: '0x10' },
          { series: 'claimkit_shards{instance="a"}', values: '2x10' },
          { series: 'claimkit_shards{instance="b"}', values: '2x10' },
          { series: 'claimkit_shards{instance="c"}', values: '2x10' },
        ],
        alert_rule_test: [
          { eval_time: '2m', alertname: 'ClaimkitNoLeader', exp_alerts: [] },
          {
            eval_time: '8m',
            alertname: 'ClaimkitNoLeader',
            exp_alerts: [{ exp_labels: { severity: 'critical' } }],
          },
        ],
      },
      {
        name: 'no controller scraped at all is no leader too',
        interval: '1m',
        input_series: [{ series: 'up{job="other"}', values: '1x10' }],
        alert_rule_test: [
          {
            eval_time: '5m',
            alertname: 'ClaimkitNoLeader',
            exp_alerts: [{ exp_labels: { severity: 'critical' } }],
          },
        ],
      },
      {
        name: 'a doctor finding present 15m alerts, by check',
        interval: '1m',
        input_series: [
          { series: 'claimkit_doctor_findings{check="CK001"}', values: '0 0 1x30' },
          { series: 'claimkit_doctor_findings{check="CK002"}', values: '0x32' },
        ],
        alert_rule_test: [
          { eval_time: '10m', alertname: 'ClaimkitDoctorFindings', exp_alerts: [] },
          {
            eval_time: '20m',
            alertname: 'ClaimkitDoctorFindings',
            exp_alerts: [{ exp_labels: { severity: 'warning', check: 'CK001' } }],
          },
        ],
      },
      {
        name: 'a sixth of the podclaim reconciles failing alerts; a podpool controller without errors does not',
        interval: '1m',
        input_series: [
          {
            series: 'controller_runtime_reconcile_total{controller="podclaim",result="success"}',
            values: '0+50x30',
          },
          {
            series: 'controller_runtime_reconcile_total{controller="podclaim",result="error"}',
            values: '0+10x30',
          },
          { series: 'controller_runtime_reconcile_errors_total{controller="podclaim"}', values: '0+10x30' },
          {
            series: 'controller_runtime_reconcile_total{controller="podpool",result="success"}',
            values: '0+50x30',
          },
          { series: 'controller_runtime_reconcile_errors_total{controller="podpool"}', values: '0x30' },
        ],
        alert_rule_test: [
          {
            eval_time: '28m',
            alertname: 'ClaimkitReconcileErrors',
            exp_alerts: [{ exp_labels: { severity: 'warning', controller: 'podclaim' } }],
          },
        ],
      },
      {
        name: 'a webhook answering 9% of a path with errors alerts; a path without errors does not',
        interval: '1m',
        input_series: [
          {
            series: 'claimkit_webhook_requests_total{path="/validate/podclaims",result="allowed"}',
            values: '0+100x20',
          },
          {
            series: 'claimkit_webhook_requests_total{path="/validate/podclaims",result="error"}',
            values: '0+10x20',
          },
          {
            series: 'claimkit_webhook_requests_total{path="/validate/podpools",result="allowed"}',
            values: '0+100x20',
          },
        ],
        alert_rule_test: [
          { eval_time: '3m', alertname: 'ClaimkitWebhookErrors', exp_alerts: [] },
          {
            eval_time: '15m',
            alertname: 'ClaimkitWebhookErrors',
            exp_alerts: [{ exp_labels: { severity: 'critical', path: '/validate/podclaims' } }],
          },
        ],
      },
    ],
  };
}

/** Grafana's variables as a query sends them to Prometheus: every value, and a 1m rate interval. */
function withVariables(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replace(/\$(namespace|pool|job)\b/g, '.*');
}

/**
 * Every query of the shipped dashboard as a recording rule (`dashboard:panel_<id>_<refId>`), so
 * `promtool check rules` parses each one as Prometheus would.
 */
export function dashboardAsRules(): RuleGroups {
  const dashboard = JSON.parse(
    readFileSync(join(repoRoot, 'deploy/monitoring/claimkit-dashboard.json'), 'utf8'),
  ) as { panels: { id: number; targets?: { expr: string; refId: string }[] }[] };
  return [
    {
      name: 'claimkit-dashboard',
      rules: dashboard.panels.flatMap((p) =>
        (p.targets ?? []).map((t) => ({
          record: `dashboard:panel_${p.id}_${t.refId}`,
          expr: withVariables(t.expr),
        })),
      ),
    },
  ];
}

/** Every metric name the shipped dashboard's and rules' queries read (deploy/monitoring). */
export function monitoringMetricNames(): string[] {
  const dir = join(repoRoot, 'deploy/monitoring');
  const dashboard = JSON.parse(readFileSync(join(dir, 'claimkit-dashboard.json'), 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
    templating: { list: { type: string; definition?: string }[] };
  };
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  for (const v of dashboard.templating.list) {
    const m = v.type === 'query' ? /^label_values\((.*),\s*\w+\)$/.exec(v.definition ?? '') : null;
    if (m) exprs.push(m[1]!);
  }
  const rule = loadYaml<{ spec: { groups: RuleGroups } }>(
    readFileSync(join(dir, 'prometheus-rule.yaml'), 'utf8'),
  );
  exprs.push(...rule.spec.groups.flatMap((g) => g.rules.map((r) => r.expr)));
  return [...new Set(exprs.flatMap((e) => metricNames(e)))].sort();
}

/** The metric names a text exposition declares (its `# TYPE` lines). */
export function exposedMetricNames(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]!));
}
