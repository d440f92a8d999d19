// The alerts shipped with claimkit (a PrometheusRule of the Prometheus Operator; its spec.groups is a
// Prometheus rule file, what `promtool check rules` reads). Each threshold is a value of the chart
// (monitoring.prometheusRule.*); deploy/monitoring/prometheus-rule.yaml carries the defaults.
// Every expression names only metrics the controller or the webhook exports (monitoring.test.ts).
import { SYSTEM_NAMESPACE } from '@claimkit/core';

/** The thresholds a user tunes: numbers, and Prometheus durations (`for:`). */
export interface RuleThresholds {
  /** A claim Pending longer than this (seconds) alerts. */
  pendingSeconds: number | string;
  /** A pool at maxPods with claims waiting this long alerts. */
  exhaustedFor: string;
  /** No replica leading for this long alerts. */
  noLeaderFor: string;
  /** Doctor findings present this long alert (a finding mid-change clears within a resync). */
  doctorFor: string;
  /** The fraction of admission requests answered with an error that alerts. */
  webhookErrorRatio: number | string;
  /** The claim -> Bound p99 (seconds) over which a pool is too small for its demand. */
  bindP99Seconds: number | string;
  /** The fraction of reconciles that error that alerts. */
  reconcileErrorRatio: number | string;
}

export const RULE_DEFAULTS: RuleThresholds = {
  pendingSeconds: 300,
  exhaustedFor: '5m',
  noLeaderFor: '2m',
  doctorFor: '15m',
  webhookErrorRatio: 0.05,
  bindP99Seconds: 30,
  reconcileErrorRatio: 0.1,
};

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: 'warning' | 'critical' };
  annotations: { summary: string; description: string; runbook_url: string };
}

export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

/** Where each alert is explained (the README's operations page). */
const RUNBOOK = 'https://github.com/claimkit/claimkit/blob/main/docs/operate.md';

export function ruleGroups(t: RuleThresholds = RULE_DEFAULTS): RuleGroup[] {
  const rule = (
    alert: string,
    severity: 'warning' | 'critical',
    expr: string,
    forDuration: string,
    summary: string,
    description: string,
    anchor: string,
  ): AlertRule => ({
    alert,
    expr,
    for: forDuration,
    labels: { severity },
    annotations: { summary, description, runbook_url: `${RUNBOOK}#${anchor}` },
  });
  return [
    {
      name: 'claimkit.claims',
      rules: [
        rule(
          'ClaimkitClaimsPendingTooLong',
          'warning',
          `max by (namespace, pool) (claimkit_podclaim_oldest_pending_seconds) > ${t.pendingSeconds}`,
          '1m',
          'PodClaims of pool {{ $labels.namespace }}/{{ $labels.pool }} wait to be Bound',
          'The oldest Pending PodClaim of pool {{ $labels.namespace }}/{{ $labels.pool }} has waited {{ $value | humanizeDuration }}. See "why is my claim not bound?".',
          'why-is-my-claim-not-bound',
        ),
        rule(
          'ClaimkitPoolExhausted',
          'warning',
          `max by (namespace, pool) (claimkit_pool_headroom_pods) <= 0 and on (namespace, pool) max by (namespace, pool) (claimkit_podclaims_pending) > 0`,
          t.exhaustedFor,
          'Pool {{ $labels.namespace }}/{{ $labels.pool }} is at maxPods with claims waiting',
          'Pool {{ $labels.namespace }}/{{ $labels.pool }} has no headroom under spec.maxPods and PodClaims are Pending: raise maxPods or release claims. See "is my pool big enough?".',
          'is-my-pool-big-enough',
        ),
        rule(
          'ClaimkitBindLatencyHigh',
          'warning',
          `histogram_quantile(0.99, sum by (namespace, pool, le) (rate(claimkit_podclaim_bind_duration_seconds_bucket[10m]))) > ${t.bindP99Seconds}`,
          '15m',
          'PodClaims of pool {{ $labels.namespace }}/{{ $labels.pool }} take long to be Bound',
          'The p99 of claim created -> Bound in pool {{ $labels.namespace }}/{{ $labels.pool }} is {{ $value | humanizeDuration }}: claims wait for pods to start rather than finding an idle one. Raise spec.minIdle. See "is my pool big enough?".',
          'is-my-pool-big-enough',
        ),
      ],
    },
    {
      name: 'claimkit.controller',
      rules: [
        rule(
          'ClaimkitNoLeader',
          'critical',
          // Fewer shards led than there are (one unsharded: claimkit_leader has no shard label then).
          // `or vector(...)`: no series at all (no replica scraped) is no leader too; a standby exports 0.
          '(count(max by (shard) (claimkit_leader) == 1) or vector(0)) < (max(claimkit_shards) or vector(1))',
          t.noLeaderFor,
          'A claimkit controller shard has no leader',
          'Fewer controller shards have a replica reporting claimkit_leader 1 than claimkit_shards says there are (one when unsharded), for the alert duration: nothing binds the claims or scales the pools of the shard(s) without one (claimkit_leader{shard} says which lead). Check the controller pods and the Lease claimkit-controller (claimkit-controller-shard-I-of-N when sharded).',
          'no-leader',
        ),
        rule(
          'ClaimkitDoctorFindings',
          'warning',
          'max by (check) (claimkit_doctor_findings) > 0',
          t.doctorFor,
          'claimkit doctor finds {{ $value }} problem(s) of check {{ $labels.check }}',
          "The controller's periodic doctor check {{ $labels.check }} finds {{ $value }} object(s) in a state it should not stay in. Run `claimctl doctor` for the objects and what to do.",
          'doctor-findings',
        ),
        rule(
          'ClaimkitReconcileErrors',
          'warning',
          `sum by (controller) (rate(controller_runtime_reconcile_errors_total[10m])) / sum by (controller) (rate(controller_runtime_reconcile_total[10m])) > ${t.reconcileErrorRatio}`,
          '15m',
          'claimkit {{ $labels.controller }} reconciles fail',
          '{{ $value | humanizePercentage }} of the {{ $labels.controller }} reconciles end in an error. The controller logs say why (key `controller`).',
          'reconcile-errors',
        ),
      ],
    },
    {
      name: 'claimkit.webhook',
      rules: [
        rule(
          'ClaimkitWebhookErrors',
          'critical',
          `sum by (path) (rate(claimkit_webhook_requests_total{result="error"}[5m])) / sum by (path) (rate(claimkit_webhook_requests_total[5m])) > ${t.webhookErrorRatio}`,
          '5m',
          'The claimkit webhook fails admission requests on {{ $labels.path }}',
          '{{ $value | humanizePercentage }} of the admission requests on {{ $labels.path }} end in an error; with failurePolicy Fail the API server refuses those writes.',
          'webhook-errors',
        ),
      ],
    },
  ];
}

/** The PrometheusRule object (deploy/monitoring/prometheus-rule.yaml, and the chart's template). */
export function prometheusRule(t: RuleThresholds = RULE_DEFAULTS, namespace = SYSTEM_NAMESPACE) {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'claimkit',
      namespace,
      labels: { 'app.kubernetes.io/name': 'claimkit', 'app.kubernetes.io/component': 'monitoring' },
    },
    spec: { groups: ruleGroups(t) },
  };
}
