// The webhook's metrics, on core's runtime-free Prometheus registry (shared with the controller), so
// the app stays a pure Web-standard handler.
import { Counter, Gauge, Histogram, Registry } from '@claimkit/core/metrics';

export { Counter, Gauge, Histogram, Registry };

/** Admission latency buckets (seconds): the target is sub-millisecond. */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1,
];

/** The webhook's own metrics. */
export interface WebhookMetrics {
  registry: Registry;
  requests: Counter;
  latency: Histogram;
  violations: Counter;
}

export function createWebhookMetrics(registry = new Registry()): WebhookMetrics {
  return {
    registry,
    requests: registry.register(
      new Counter(
        'claimkit_webhook_requests_total',
        'Admission requests by path and result (allowed, denied, bad_request, error).',
      ),
    ),
    latency: registry.register(
      new Histogram(
        'claimkit_webhook_request_duration_seconds',
        'Time to answer an admission request, by path.',
        LATENCY_BUCKETS,
      ),
    ),
    violations: registry.register(
      new Counter('claimkit_webhook_violations_total', 'Violations found, by path and field.'),
    ),
  };
}
