// The Grafana dashboard shipped with claimkit (deploy/monitoring/claimkit-dashboard.json; the chart's
// monitoring.dashboard ConfigMap carries the same file for Grafana's sidecar). Built here rather than
// exported from a Grafana so its layout, datasource and selectors are uniform; every query names only
// metrics the controller or the webhook exports (monitoring.test.ts).

/** The datasource template variable every panel and query uses. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JS template.
export const DATASOURCE_UID = '${datasource}';
const DS = { type: 'prometheus', uid: DATASOURCE_UID };
/** A pool's series: the namespace and pool template variables. */
const POOL = 'namespace=~"$namespace", pool=~"$pool"';
/** The claimkit processes' series (the job template variable: the controller's and the webhook's). */
const JOB = 'job=~"$job"';
const RATE = '$__rate_interval';

interface Target {
  expr: string;
  legend: string;
}
interface PanelSpec {
  title: string;
  description: string;
  unit: string;
  targets: Target[];
  /** Grid columns of 24 (default 8). */
  width?: number;
  type?: 'timeseries' | 'stat';
  stack?: boolean;
}
interface Row {
  title: string;
  panels: PanelSpec[];
}

const t = (expr: string, legend: string): Target => ({ expr, legend });
const quantiles = (metric: string, by: string, sel: string, legend: string, qs = [0.5, 0.9, 0.99]) =>
  qs.map((q) =>
    t(
      `histogram_quantile(${q}, sum by (${by}, le) (rate(${metric}_bucket{${sel}}[${RATE}])))`,
      `p${Math.round(q * 100)} ${legend}`,
    ),
  );

const ROWS: Row[] = [
  {
    title: 'Claims',
    panels: [
      {
        title: 'Claim created → Bound latency',
        description:
          "p50/p90/p99 per pool of claimkit_podclaim_bind_duration_seconds (from the claim's own creationTimestamp to its first Bound). High: claims wait for pods to start, not for an idle one.",
        unit: 's',
        width: 12,
        targets: quantiles(
          'claimkit_podclaim_bind_duration_seconds',
          'namespace, pool',
          POOL,
          '{{namespace}}/{{pool}}',
        ),
      },
      {
        title: 'Pending claims',
        description: 'PodClaims waiting (Pending) per pool (claimkit_podclaims_pending).',
        unit: 'short',
        width: 6,
        targets: [
          t(`max by (namespace, pool) (claimkit_podclaims_pending{${POOL}})`, '{{namespace}}/{{pool}}'),
        ],
      },
      {
        title: 'Oldest pending claim',
        description:
          'Age of the oldest Pending PodClaim per pool (claimkit_podclaim_oldest_pending_seconds); the ClaimkitClaimsPendingTooLong alert fires over its threshold.',
        unit: 's',
        width: 6,
        targets: [
          t(
            `max by (namespace, pool) (claimkit_podclaim_oldest_pending_seconds{${POOL}})`,
            '{{namespace}}/{{pool}}',
          ),
        ],
      },
      {
        title: 'Claims by phase',
        description: "PodClaims by phase, from the controller's informer cache (claimkit_podclaims).",
        unit: 'short',
        targets: [t(`max by (phase) (claimkit_podclaims{${JOB}})`, '{{phase}}')],
        stack: true,
      },
      {
        title: 'Lost → Bound again latency',
        description: 'p50/p99 per pool of claimkit_podclaim_rebind_duration_seconds.',
        unit: 's',
        targets: quantiles(
          'claimkit_podclaim_rebind_duration_seconds',
          'namespace, pool',
          POOL,
          '{{namespace}}/{{pool}}',
          [0.5, 0.99],
        ),
      },
      {
        title: 'Claims lost',
        description: 'PodClaims that went Lost per pool (claimkit_podclaim_lost_total).',
        unit: 'short',
        targets: [
          t(
            `sum by (namespace, pool) (increase(claimkit_podclaim_lost_total{${POOL}}[${RATE}]))`,
            '{{namespace}}/{{pool}}',
          ),
        ],
      },
    ],
  },
  {
    title: 'Pools',
    panels: [
      {
        title: 'Pool pods by state',
        description:
          'Pods of each pool by state: idle, bound, starting, draining, outdated (claimkit_pool_pods).',
        unit: 'short',
        width: 12,
        stack: true,
        targets: [
          t(
            `max by (namespace, pool, state) (claimkit_pool_pods{${POOL}})`,
            '{{namespace}}/{{pool}} {{state}}',
          ),
        ],
      },
      {
        title: 'Headroom under maxPods',
        description:
          'maxPods minus the pods counted against it (claimkit_pool_headroom_pods; only pools with maxPods). At 0 with claims pending the pool is exhausted (ClaimkitPoolExhausted).',
        unit: 'short',
        width: 6,
        targets: [
          t(`min by (namespace, pool) (claimkit_pool_headroom_pods{${POOL}})`, '{{namespace}}/{{pool}}'),
        ],
      },
      {
        title: 'Idle vs target (minIdle)',
        description:
          'Idle pods against spec.minIdle (claimkit_pool_target_idle) and spec.maxPods (claimkit_pool_max_pods).',
        unit: 'short',
        width: 6,
        targets: [
          t(
            `max by (namespace, pool) (claimkit_pool_pods{${POOL}, state="idle"})`,
            'idle {{namespace}}/{{pool}}',
          ),
          t(
            `max by (namespace, pool) (claimkit_pool_target_idle{${POOL}})`,
            'minIdle {{namespace}}/{{pool}}',
          ),
          t(`max by (namespace, pool) (claimkit_pool_max_pods{${POOL}})`, 'maxPods {{namespace}}/{{pool}}'),
        ],
      },
      {
        title: 'Binds and releases',
        description: 'Per second, per pool (claimkit_pool_binds_total, claimkit_pool_releases_total).',
        unit: 'ops',
        width: 12,
        targets: [
          t(
            `sum by (namespace, pool) (rate(claimkit_pool_binds_total{${POOL}}[${RATE}]))`,
            'binds {{namespace}}/{{pool}}',
          ),
          t(
            `sum by (namespace, pool) (rate(claimkit_pool_releases_total{${POOL}}[${RATE}]))`,
            'releases {{namespace}}/{{pool}}',
          ),
        ],
      },
      {
        title: 'Recycles and migrations',
        description:
          'Per second, per pool (claimkit_pool_recycles_total; claimkit_pool_migrations_total by result).',
        unit: 'ops',
        width: 12,
        targets: [
          t(
            `sum by (namespace, pool) (rate(claimkit_pool_recycles_total{${POOL}}[${RATE}]))`,
            'recycles {{namespace}}/{{pool}}',
          ),
          t(
            `sum by (namespace, pool, result) (rate(claimkit_pool_migrations_total{${POOL}}[${RATE}]))`,
            'migrations {{namespace}}/{{pool}} {{result}}',
          ),
        ],
      },
    ],
  },
  {
    title: 'Controller',
    panels: [
      {
        title: 'Leader',
        description:
          'Replicas leading (claimkit_leader; a standby exports 0): 1, or one per shard (claimkit_shards) when the controllers are sharded. Fewer for long: ClaimkitNoLeader. More briefly during a takeover is safe (writes are fenced).',
        unit: 'short',
        width: 4,
        type: 'stat',
        targets: [t(`sum(claimkit_leader{${JOB}})`, 'leading')],
      },
      {
        title: 'Leader takeovers',
        description: 'Leases taken over from another holder, by reason (claimkit_leader_takeovers_total).',
        unit: 'short',
        width: 4,
        targets: [
          t(`sum by (reason) (increase(claimkit_leader_takeovers_total{${JOB}}[${RATE}]))`, '{{reason}}'),
        ],
      },
      {
        title: 'Leader by replica',
        description: 'leader_election_master_status per replica (controller-runtime name).',
        unit: 'short',
        width: 4,
        targets: [
          t(
            `max by (instance) (leader_election_master_status{${JOB}, name="claimkit-controller"})`,
            '{{instance}}',
          ),
        ],
      },
      {
        title: 'Reconciles',
        description: 'Per second by controller and result (controller_runtime_reconcile_total).',
        unit: 'ops',
        width: 12,
        targets: [
          t(
            `sum by (controller, result) (rate(controller_runtime_reconcile_total{${JOB}}[${RATE}]))`,
            '{{controller}} {{result}}',
          ),
        ],
      },
      {
        title: 'Reconcile errors',
        description: 'Per second by controller (controller_runtime_reconcile_errors_total).',
        unit: 'ops',
        targets: [
          t(
            `sum by (controller) (rate(controller_runtime_reconcile_errors_total{${JOB}}[${RATE}]))`,
            '{{controller}}',
          ),
        ],
      },
      {
        title: 'Reconcile latency',
        description: 'p50/p99 by controller (controller_runtime_reconcile_time_seconds).',
        unit: 's',
        targets: quantiles(
          'controller_runtime_reconcile_time_seconds',
          'controller',
          JOB,
          '{{controller}}',
          [0.5, 0.99],
        ),
      },
      {
        title: 'Work queue',
        description:
          'Keys waiting (workqueue_depth), adds and retries per second (workqueue_adds_total, workqueue_retries_total).',
        unit: 'short',
        targets: [
          t(`sum by (instance) (workqueue_depth{${JOB}, name="claimkit"})`, 'depth {{instance}}'),
          t(`sum(rate(workqueue_adds_total{${JOB}, name="claimkit"}[${RATE}]))`, 'adds/s'),
          t(`sum(rate(workqueue_retries_total{${JOB}, name="claimkit"}[${RATE}]))`, 'retries/s'),
        ],
      },
      {
        title: 'Work queue wait and work',
        description:
          'p99 of the time a key waits in the queue (workqueue_queue_duration_seconds) and of the work on it (workqueue_work_duration_seconds).',
        unit: 's',
        targets: [
          ...quantiles(
            'workqueue_queue_duration_seconds',
            'name',
            `${JOB}, name="claimkit"`,
            'queued',
            [0.99],
          ),
          ...quantiles('workqueue_work_duration_seconds', 'name', `${JOB}, name="claimkit"`, 'work', [0.99]),
        ],
      },
      {
        title: 'Kubernetes API requests',
        description: 'Per second by verb, resource and code (claimkit_api_requests_total).',
        unit: 'ops',
        width: 24,
        targets: [
          t(
            `sum by (verb, resource, code) (rate(claimkit_api_requests_total{${JOB}}[${RATE}]))`,
            '{{verb}} {{resource}} {{code}}',
          ),
        ],
      },
      {
        title: 'Kubernetes API request latency',
        description:
          'p99 by verb and resource of claimkit_api_request_duration_seconds (a watch: until its response headers). A bind waits on its pod patch and two claim writes.',
        unit: 's',
        width: 24,
        targets: [
          t(
            `histogram_quantile(0.99, sum by (verb, resource, le) (rate(claimkit_api_request_duration_seconds_bucket{${JOB}, verb!="watch"}[${RATE}])))`,
            '{{verb}} {{resource}}',
          ),
        ],
      },
    ],
  },
  {
    title: 'Captures, fencing and doctor',
    panels: [
      {
        title: 'Capture latency',
        description:
          'p50/p99 by backend of claimkit_capture_duration_seconds (capture claim opened -> result written).',
        unit: 's',
        targets: quantiles(
          'claimkit_capture_duration_seconds',
          'backend',
          'namespace=~"$namespace"',
          '{{backend}}',
          [0.5, 0.99],
        ),
      },
      {
        title: 'Capture takeovers',
        description: 'Capture claims taken over, by reason (claimkit_capture_takeovers_total).',
        unit: 'short',
        targets: [
          t(`sum by (reason) (increase(claimkit_capture_takeovers_total{${JOB}}[${RATE}]))`, '{{reason}}'),
        ],
      },
      {
        title: 'Fenced refusals',
        description:
          'Writes refused by fencing, by layer (claimkit_fenced_refusals_total): a stale writer stopped, as designed; a steady rate means a writer keeps acting on an old token.',
        unit: 'short',
        targets: [t(`sum by (layer) (increase(claimkit_fenced_refusals_total[${RATE}]))`, '{{layer}}')],
      },
      {
        title: 'Doctor findings',
        description:
          "Findings of the doctor's checks over the controller's cache, by check (claimkit_doctor_findings; 0 when clean). `claimctl doctor` names the objects.",
        unit: 'short',
        width: 24,
        targets: [t(`max by (check) (claimkit_doctor_findings{${JOB}})`, '{{check}}')],
      },
    ],
  },
  {
    title: 'Webhook',
    panels: [
      {
        title: 'Admission requests',
        description: 'Per second by path and result (claimkit_webhook_requests_total).',
        unit: 'ops',
        targets: [
          t(
            `sum by (path, result) (rate(claimkit_webhook_requests_total{${JOB}}[${RATE}]))`,
            '{{path}} {{result}}',
          ),
        ],
      },
      {
        title: 'Admission latency',
        description: 'p50/p99 by path (claimkit_webhook_request_duration_seconds).',
        unit: 's',
        targets: quantiles('claimkit_webhook_request_duration_seconds', 'path', JOB, '{{path}}', [0.5, 0.99]),
      },
      {
        title: 'Admission errors',
        description:
          'The fraction of requests answered with an error, by path (ClaimkitWebhookErrors fires over its threshold).',
        unit: 'percentunit',
        targets: [
          t(
            `sum by (path) (rate(claimkit_webhook_requests_total{${JOB}, result="error"}[${RATE}])) / sum by (path) (rate(claimkit_webhook_requests_total{${JOB}}[${RATE}]))`,
            '{{path}}',
          ),
        ],
      },
    ],
  },
  {
    title: 'Processes',
    panels: [
      {
        title: 'Memory',
        description:
          'Resident memory and V8 heap used, per process (process_resident_memory_bytes, nodejs_heap_size_used_bytes).',
        unit: 'bytes',
        targets: [
          t(`process_resident_memory_bytes{${JOB}}`, 'rss {{job}} {{instance}}'),
          t(`nodejs_heap_size_used_bytes{${JOB}}`, 'heap {{job}} {{instance}}'),
        ],
      },
      {
        title: 'CPU',
        description: 'CPU seconds per second, per process (process_cpu_seconds_total).',
        unit: 'short',
        targets: [t(`rate(process_cpu_seconds_total{${JOB}}[${RATE}])`, '{{job}} {{instance}}')],
      },
      {
        title: 'Event loop lag',
        description:
          "Node's event loop delay per process between two scrapes: the mean (nodejs_eventloop_lag_seconds) and the longest (nodejs_eventloop_lag_max_seconds; a stall holds every watch event and reconcile up). Each includes the 10 ms sampling interval.",
        unit: 's',
        targets: [
          t(`nodejs_eventloop_lag_seconds{${JOB}}`, 'mean {{job}} {{instance}}'),
          t(`nodejs_eventloop_lag_max_seconds{${JOB}}`, 'max {{job}} {{instance}}'),
        ],
      },
    ],
  },
];

/** A template variable of the dashboard's Prometheus datasource. */
function queryVariable(name: string, label: string, query: string, regex = '') {
  return {
    name,
    label,
    type: 'query',
    datasource: DS,
    query: { query, refId: `${name}-variable` },
    definition: query,
    regex,
    refresh: 2,
    sort: 1,
    multi: true,
    includeAll: true,
    current: { selected: true, text: ['All'], value: ['$__all'] },
    hide: 0,
    options: [],
  };
}

/** The dashboard: rows of panels laid out left to right, 8 units high. */
export function claimkitDashboard() {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of ROWS) {
    panels.push({
      id: id++,
      type: 'row',
      title: row.title,
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y },
      panels: [],
    });
    y += 1;
    let x = 0;
    for (const p of row.panels) {
      const w = p.width ?? 8;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      const type = p.type ?? 'timeseries';
      panels.push({
        id: id++,
        type,
        title: p.title,
        description: p.description,
        datasource: DS,
        gridPos: { h: 8, w, x, y },
        fieldConfig: {
          defaults:
            type === 'stat'
              ? {
                  unit: p.unit,
                  thresholds: {
                    mode: 'absolute',
                    steps: [
                      { color: 'red', value: null },
                      { color: 'green', value: 1 },
                    ],
                  },
                }
              : {
                  unit: p.unit,
                  custom: {
                    drawStyle: 'line',
                    fillOpacity: p.stack ? 30 : 10,
                    stacking: { mode: p.stack ? 'normal' : 'none', group: 'A' },
                  },
                },
          overrides: [],
        },
        options:
          type === 'stat'
            ? {
                reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
                colorMode: 'background',
                graphMode: 'none',
                textMode: 'auto',
              }
            : {
                legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
                tooltip: { mode: 'multi', sort: 'desc' },
              },
        targets: p.targets.map((tg, i) => ({
          datasource: DS,
          refId: String.fromCharCode(65 + i),
          expr: tg.expr,
          legendFormat: tg.legend,
          range: true,
        })),
      });
      x += w;
    }
    y += 8;
  }
  return {
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    description: 'claimkit: claims, pools, the controller, captures and fencing, the admission webhook.',
    editable: true,
    graphTooltip: 1,
    links: [],
    panels,
    refresh: '30s',
    schemaVersion: 39,
    tags: ['claimkit'],
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
          options: [],
          refresh: 1,
          regex: '',
        },
        // The controller's and the webhook's scrape jobs (a ServiceMonitor's: the Service's name; a
        // PodMonitor's: <namespace>/<name>): every claimkit job by default.
        queryVariable('job', 'Job', 'label_values(process_start_time_seconds, job)', '/.*claimkit.*/'),
        queryVariable('namespace', 'Namespace', 'label_values(claimkit_pool_pods, namespace)'),
        queryVariable('pool', 'Pool', 'label_values(claimkit_pool_pods{namespace=~"$namespace"}, pool)'),
      ],
    },
    time: { from: 'now-6h', to: 'now' },
    timepicker: {},
    timezone: '',
    title: 'claimkit',
    uid: 'claimkit-overview',
    version: 1,
  };
}

/** The dashboard as the file Grafana imports (2-space JSON, a final newline). */
export function dashboardJson(): string {
  return `${JSON.stringify(claimkitDashboard(), null, 2)}\n`;
}
