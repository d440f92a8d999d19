// The controller's metrics, on core's runtime-free Prometheus registry (shared with the webhook).
import { Counter, Gauge, Histogram, Registry } from '@claimkit/core/metrics';

export { Counter, Gauge, Histogram, Registry };

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
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
  );
  readonly queueDepth = this.registry.register(
    new Gauge('claimkit_workqueue_depth', 'Keys ready in the work queue.'),
  );
  readonly queueRetries = this.registry.register(
    new Counter('claimkit_workqueue_retries_total', 'Rate-limited re-adds after errors.'),
  );
  readonly apiRequests = this.registry.register(
    new Counter('claimkit_api_requests_total', 'Kubernetes API requests by verb, resource and HTTP code.'),
  );
  readonly takeovers = this.registry.register(
    new Counter(
      'claimkit_capture_takeovers_total',
      'Capture claims taken over (TakenOver events) by reason.',
    ),
  );
  readonly events = this.registry.register(
    new Counter('claimkit_events_total', 'Kubernetes Events recorded by type and reason.'),
  );
  readonly sweeps = this.registry.register(
    new Counter('claimkit_capture_sweeps_total', 'Capture recovery sweeps by result.'),
  );
  readonly leader = this.registry.register(new Gauge('claimkit_leader', '1 while this replica leads.'));
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
}
