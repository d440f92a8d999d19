// The webhook's metrics, on core's runtime-free Prometheus registry (shared with the controller), so
// the app stays a pure Web-standard handler.

import { CLAIMKIT_VERSION } from '@claimkit/core';
import {
  Counter,
  Gauge,
  Histogram,
  type ProcessLike,
  processStats,
  Registry,
  type RuntimeMetrics,
  registerBuildInfo,
  registerRuntimeMetrics,
} from '@claimkit/core/metrics';

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
  /** controller-runtime's webhook metrics: requests by webhook (path) and HTTP code, latency by webhook. */
  crRequests: Counter;
  crLatency: Histogram;
  /** process_* and nodejs_*: `globalThis.process` where there is one (Node, Deno 2); the Node entry adds more. */
  runtime: RuntimeMetrics;
  /** claimkit_build_info{component="webhook", version, runtime} 1. */
  buildInfo: Gauge;
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
        'Time to answer an admission request, by path and result.',
        LATENCY_BUCKETS,
      ),
    ),
    violations: registry.register(
      new Counter('claimkit_webhook_violations_total', 'Violations found, by path and field.'),
    ),
    crRequests: registry.register(
      new Counter(
        'controller_runtime_webhook_requests_total',
        'Total number of admission requests by HTTP status code.',
      ),
    ),
    crLatency: registry.register(
      new Histogram(
        'controller_runtime_webhook_latency_seconds',
        'Histogram of the latency of processing admission requests.',
        LATENCY_BUCKETS,
      ),
    ),
    // Read through globalThis, not imported: the app stays a Web-standard handler (Deno runs it too).
    runtime: registerRuntimeMetrics(registry, runtimeProcess()),
    buildInfo: registerBuildInfo(registry, {
      component: 'webhook',
      version: CLAIMKIT_VERSION,
      runtime: runtimeName(),
    }),
  };
}

/** `deno 2.9.6` under Deno (which also has a Node-compatible process), else `node v24.22.3`. */
function runtimeName(): string {
  const g = globalThis as { Deno?: { version?: { deno?: string } }; process?: { version?: string } };
  if (g.Deno?.version?.deno) return `deno ${g.Deno.version.deno}`;
  return `node ${g.process?.version ?? 'unknown'}`;
}

function runtimeProcess() {
  const proc = (globalThis as { process?: ProcessLike }).process;
  return proc ? processStats(proc) : {};
}

/** Every metric name the webhook registers (the chart's dashboard and alerts may query only these). */
export function webhookMetricNames(): string[] {
  return createWebhookMetrics().registry.names();
}
