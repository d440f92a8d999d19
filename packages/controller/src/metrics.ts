// The controller's metrics, on core's runtime-free Prometheus registry (shared with the webhook).
import { CLAIMKIT_VERSION, EVENT_QUEUE_CAPACITY, type QueueAction } from '@claimkit/core';
import {
  Counter,
  Gauge,
  Histogram,
  processStats,
  Registry,
  registerBuildInfo,
  registerRuntimeMetrics,
} from '@claimkit/core/metrics';

export { Counter, Gauge, Histogram, Registry };

/** The Lease name leader_election_master_status reports (controller-runtime's `name` label). */
export const LEADER_ELECTION_NAME = 'claimkit-controller';
/** The work queue's `name` label on the workqueue_* metrics. */
export const WORKQUEUE_NAME = 'claimkit';

const RECONCILE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** controller-runtime's workqueue buckets (1 µs .. 10 s, x10). */
const QUEUE_BUCKETS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];
/**
 * API request latency, client-go's rest_client_request_duration_seconds buckets (5 ms .. 60 s): a
 * write answers in milliseconds on a healthy control plane, and seconds are what an operator hunts.
 */
const REQUEST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
/** Claim -> Bound and capture latencies: from a warm pool's sub-second bind to a cold start of minutes. */
const SLI_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** The controller's metrics. */
export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles = this.registry.register(
    new Counter('claimkit_reconcile_total', 'Reconciles by kind and result (success, requeue, error).'),
  );
  readonly reconcileSeconds = this.registry.register(
    new Histogram(
      'claimkit_reconcile_duration_seconds',
      'Reconcile duration by kind and result.',
      RECONCILE_BUCKETS,
    ),
  );
  readonly queueDepth = this.registry.register(
    new Gauge('claimkit_workqueue_depth', 'Keys ready in the work queue.'),
  );
  readonly workers = this.registry.register(
    new Gauge(
      'claimkit_workers',
      'Reconcile workers running: --concurrency, and those added while the queue backs up (up to --max-concurrency).',
    ),
  );
  readonly queueRetries = this.registry.register(
    new Counter('claimkit_workqueue_retries_total', 'Rate-limited re-adds after errors.'),
  );
  readonly writeConflicts = this.registry.register(
    new Counter(
      'claimkit_write_conflicts_total',
      'Writes of a decision refused with 409 Conflict, by reconciler and write (kind, op and intent).',
    ),
  );
  readonly apiRequests = this.registry.register(
    new Counter('claimkit_api_requests_total', 'Kubernetes API requests by verb, resource and HTTP code.'),
  );
  readonly apiRequestSeconds = this.registry.register(
    new Histogram(
      'claimkit_api_request_duration_seconds',
      'Kubernetes API request latency by verb and resource (a watch: until its response headers).',
      REQUEST_BUCKETS,
    ),
  );
  readonly takeovers = this.registry.register(
    new Counter(
      'claimkit_capture_takeovers_total',
      'Capture claims taken over (TakenOver events) by reason.',
    ),
  );
  readonly events = this.registry.register(
    new Counter(
      'claimkit_events_total',
      'Kubernetes Events recorded by type and reason (also those --disable-claim-events does not write).',
    ),
  );
  readonly eventsDropped = this.registry.register(
    new Counter(
      'claimkit_events_dropped_total',
      `Kubernetes Events not written because ${EVENT_QUEUE_CAPACITY} were already waiting for the background writers.`,
    ),
  );
  readonly sweeps = this.registry.register(
    new Counter('claimkit_capture_sweeps_total', 'Capture recovery sweeps by result.'),
  );
  readonly leader = this.registry.register(
    new Gauge(
      'claimkit_leader',
      '1 while this replica leads, 0 on a standby; by shard (label shard) when the controllers are sharded.',
    ),
  );
  readonly shards = this.registry.register(
    new Gauge(
      'claimkit_shards',
      'The shards the controllers split the pools over (--shard INDEX/COUNT: COUNT; 1 unsharded).',
    ),
  );
  readonly leaderTakeovers = this.registry.register(
    new Counter(
      'claimkit_leader_takeovers_total',
      'Leader Leases this replica took over from another holder, by reason (LeaseExpired, or the holder pod or container found dead: HolderGone, HolderReplaced, HolderTerminating, HolderFinished, HolderContainerTerminated, HolderContainerRestarted).',
    ),
  );
  /** Set by the manager: PodClaims by phase from its cache. */
  claimPhases: () => Record<string, number> = () => ({});
  readonly claimsByPhase = this.registry.register(
    new Gauge('claimkit_podclaims', 'PodClaims by phase (from the informer cache).', () =>
      Object.entries(this.claimPhases()).map(([phase, v]) => ({ labels: { phase }, v })),
    ),
  );

  // ---- controller-runtime's names, so dashboards built for controller-runtime controllers work ----
  readonly crReconciles = this.registry.register(
    new Counter(
      'controller_runtime_reconcile_total',
      'Reconciles per controller and result (success, error, requeue, requeue_after).',
    ),
  );
  readonly crReconcileErrors = this.registry.register(
    new Counter('controller_runtime_reconcile_errors_total', 'Reconcile errors per controller.'),
  );
  readonly crReconcileSeconds = this.registry.register(
    new Histogram(
      'controller_runtime_reconcile_time_seconds',
      'Length of time per reconcile per controller.',
      RECONCILE_BUCKETS,
    ),
  );
  readonly crMaxConcurrent = this.registry.register(
    new Gauge(
      'controller_runtime_max_concurrent_reconciles',
      'Maximum number of concurrent reconciles per controller.',
    ),
  );
  readonly crActiveWorkers = this.registry.register(
    new Gauge('controller_runtime_active_workers', 'Number of currently used workers per controller.'),
  );
  readonly wqDepth = this.registry.register(new Gauge('workqueue_depth', 'Current depth of workqueue.'));
  readonly wqAdds = this.registry.register(
    new Counter('workqueue_adds_total', 'Total number of adds handled by workqueue.'),
  );
  readonly wqRetries = this.registry.register(
    new Counter('workqueue_retries_total', 'Total number of retries handled by workqueue.'),
  );
  readonly wqQueueSeconds = this.registry.register(
    new Histogram(
      'workqueue_queue_duration_seconds',
      'How long in seconds an item stays in workqueue before being requested.',
      QUEUE_BUCKETS,
    ),
  );
  readonly wqWorkSeconds = this.registry.register(
    new Histogram(
      'workqueue_work_duration_seconds',
      'How long in seconds processing an item from workqueue takes.',
      QUEUE_BUCKETS,
    ),
  );
  /** Set by the manager: how long each key in processing has been held (ms). */
  processingMs: () => number[] = () => [];
  readonly wqUnfinished = this.registry.register(
    new Gauge(
      'workqueue_unfinished_work_seconds',
      'How many seconds of work has been done that is in progress and has not been observed by work_duration.',
      () => [{ labels: { name: WORKQUEUE_NAME }, v: this.processingMs().reduce((a, b) => a + b, 0) / 1000 }],
    ),
  );
  readonly wqLongest = this.registry.register(
    new Gauge(
      'workqueue_longest_running_processor_seconds',
      'How many seconds has the longest running processor for workqueue been running.',
      () => [{ labels: { name: WORKQUEUE_NAME }, v: Math.max(0, ...this.processingMs()) / 1000 }],
    ),
  );
  readonly leaderStatus = this.registry.register(
    new Gauge(
      'leader_election_master_status',
      'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
    ),
  );

  // ---- SLIs, from the objects' own timestamps and the cache (slis.ts); per pool, never per claim ----
  readonly bindSeconds = this.registry.register(
    new Histogram(
      'claimkit_podclaim_bind_duration_seconds',
      'PodClaim creationTimestamp to its first Bound (Bound condition lastTransitionTime), per pool.',
      SLI_BUCKETS,
    ),
  );
  readonly rebindSeconds = this.registry.register(
    new Histogram(
      'claimkit_podclaim_rebind_duration_seconds',
      'PodClaim Lost (status.lostTime) to Bound again, per pool.',
      SLI_BUCKETS,
    ),
  );
  readonly lost = this.registry.register(
    new Counter('claimkit_podclaim_lost_total', 'PodClaims that went Lost, per pool.'),
  );
  /** Set by the manager: computes the cache-backed gauges (slis.ts), once per scrape. */
  cacheGauges: () => CacheGauges = () => ({});
  private cached: CacheGauges = {};
  readonly pending = this.registry.register(
    new Gauge(
      'claimkit_podclaims_pending',
      'PodClaims waiting for a pod (Pending), per pool.',
      () => this.cached.pending ?? [],
    ),
  );
  readonly oldestPending = this.registry.register(
    new Gauge(
      'claimkit_podclaim_oldest_pending_seconds',
      'Age of the oldest Pending PodClaim, per pool (0 when none waits).',
      () => this.cached.oldestPending ?? [],
    ),
  );
  readonly poolPods = this.registry.register(
    new Gauge(
      'claimkit_pool_pods',
      'Pool pods by state: idle (Ready), starting (Idle, not Ready yet), bound, draining; outdated (an older template, any state) overlaps them.',
      () => this.cached.poolPods ?? [],
    ),
  );
  readonly poolTargetIdle = this.registry.register(
    new Gauge(
      'claimkit_pool_target_idle',
      "The pool's spec.minIdle (its Idle target).",
      () => this.cached.targetIdle ?? [],
    ),
  );
  readonly poolMaxPods = this.registry.register(
    new Gauge('claimkit_pool_max_pods', "The pool's spec.maxPods.", () => this.cached.maxPods ?? []),
  );
  readonly poolHeadroom = this.registry.register(
    new Gauge(
      'claimkit_pool_headroom_pods',
      'spec.maxPods minus the pool pods counted against it (terminating ones included).',
      () => this.cached.headroom ?? [],
    ),
  );
  readonly binds = this.registry.register(
    new Counter('claimkit_pool_binds_total', 'Pods bound to a claim (successful bind writes), per pool.'),
  );
  readonly releases = this.registry.register(
    new Counter(
      'claimkit_pool_releases_total',
      'Pods released by claims (returned to Idle, or deleted by the Delete policy), per pool.',
    ),
  );
  readonly recycles = this.registry.register(
    new Counter('claimkit_pool_recycles_total', 'Released pods returned to Idle (Recycle policy), per pool.'),
  );
  readonly migrations = this.registry.register(
    new Counter(
      'claimkit_pool_migrations_total',
      'Finished claim migrations per pool, by result (success: moved to a new pod; lost: no pod left).',
    ),
  );
  readonly captureSeconds = this.registry.register(
    new Histogram(
      'claimkit_capture_duration_seconds',
      'Capture claim opened (status.claim.acquireTime) to result written (status.result.completionTime), by backend.',
      SLI_BUCKETS,
    ),
  );
  readonly fencedRefusals = this.registry.register(
    new Counter(
      'claimkit_fenced_refusals_total',
      'Writes refused by fencing as this controller saw them, by layer (api_conflict, capture_agent, result_fence, webhook, policy).',
    ),
  );
  /** Set by the manager: findings per check of the latest doctor run over the cache. */
  doctorFindings: () => { labels: Record<string, string>; v: number }[] = () => [];
  readonly doctor = this.registry.register(
    new Gauge(
      'claimkit_doctor_findings',
      "Findings of core's doctor checks over the controller's cache, per check (0 when clean); refreshed periodically while leading.",
      () => this.doctorFindings(),
    ),
  );

  // ---- process_* and nodejs_* (prom-client's names), from this process ----
  readonly runtime = registerRuntimeMetrics(this.registry, processStats(process));
  readonly buildInfo = registerBuildInfo(this.registry, {
    component: 'controller',
    version: CLAIMKIT_VERSION,
    runtime: `node ${process.version}`,
  });

  constructor() {
    this.registry.onRender(() => {
      this.cached = this.cacheGauges();
    });
    // Always exported, so an alert on `== 0` sees a standby (the Manager sets 1 while leading).
    this.leader.set(0);
    this.shards.set(1);
    this.leaderStatus.set(0, { name: LEADER_ELECTION_NAME });
    this.wqDepth.set(0, { name: WORKQUEUE_NAME });
  }

  /** One finished API request (each attempt of a retried one): its count by code and its latency. */
  apiRequest(verb: string, resource: string, code: number, ms: number): void {
    this.apiRequests.inc({ verb, resource, code: String(code) });
    this.apiRequestSeconds.observe(ms / 1000, { verb, resource });
  }

  /** controller-runtime's reconcile metrics for one reconcile turn (core's QueueAction -> its result label). */
  controllerRuntimeTurn(kind: string, action: QueueAction, secs: number): void {
    const controller = kind.toLowerCase();
    const result =
      action.next === 'retry-rate-limited'
        ? 'error'
        : action.next === 'backoff'
          ? 'requeue'
          : action.next === 'forget-then-add-after'
            ? 'requeue_after'
            : 'success';
    this.crReconciles.inc({ controller, result });
    if (result === 'error') this.crReconcileErrors.inc({ controller });
    this.crReconcileSeconds.observe(secs, { controller });
  }

  /** Every metric name this registry exports (families; histograms add _bucket, _sum and _count). */
  names(): string[] {
    return this.registry.names();
  }
}

type Series = { labels: Record<string, string>; v: number }[];

/** What the cache-backed gauges read at scrape time (slis.ts computes it). */
export interface CacheGauges {
  pending?: Series;
  oldestPending?: Series;
  poolPods?: Series;
  targetIdle?: Series;
  maxPods?: Series;
  headroom?: Series;
}

/** Every metric name the controller registers (the chart's dashboard and alerts may query only these). */
export function controllerMetricNames(): string[] {
  return new ControllerMetrics().names();
}
