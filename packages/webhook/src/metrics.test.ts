// The webhook's /metrics: the names the chart's dashboard may query, and an exposition Prometheus reads.
import type { PodState } from '@claimkit/core';
import { parseExposition, withState } from '@claimkit/core/testing';
import { describe, expect, it } from 'vitest';
import { createWebhookMetrics, webhookMetricNames } from './metrics.ts';
import { poolPod, post, reviewFor, testApp } from './testing/review.ts';

const PODS = '/validate/pods';

describe('webhook metrics', () => {
  it("webhookMetricNames() lists the webhook's names: its own, controller-runtime's webhook names, process_* and nodejs_*", () => {
    const names = webhookMetricNames();
    expect(new Set(names).size).toBe(names.length);
    for (const n of [
      'claimkit_webhook_requests_total',
      'claimkit_webhook_request_duration_seconds',
      'claimkit_webhook_violations_total',
      'controller_runtime_webhook_requests_total',
      'controller_runtime_webhook_latency_seconds',
      'claimkit_build_info',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_virtual_memory_bytes',
      'process_heap_bytes',
      'process_start_time_seconds',
      'process_open_fds',
      'process_max_fds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_min_seconds',
      'nodejs_eventloop_lag_max_seconds',
      'nodejs_eventloop_lag_mean_seconds',
      'nodejs_eventloop_lag_stddev_seconds',
      'nodejs_eventloop_lag_p50_seconds',
      'nodejs_eventloop_lag_p90_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_heap_size_total_bytes',
      'nodejs_external_memory_bytes',
      'nodejs_gc_duration_seconds',
      'nodejs_version_info',
    ])
      expect(names).toContain(n);
    expect(names).toEqual(createWebhookMetrics().registry.names());
  });

  it('every line of /metrics is valid Prometheus text exposition after allowed, denied and bad requests', async () => {
    const metrics = createWebhookMetrics();
    const { app } = testApp({ metrics });
    await post(app, PODS, reviewFor({ kind: 'Pod', object: poolPod('p', withState('Idle')) }));
    await post(app, PODS, reviewFor({ kind: 'Pod', object: poolPod('p', withState('Nope' as PodState)) }));
    await post(app, PODS, 'garbage');
    const families = parseExposition(await (await app.request('/metrics')).text());
    expect(families.map((f) => f.name)).toEqual(webhookMetricNames());
    const latency = families.find((f) => f.name === 'claimkit_webhook_request_duration_seconds')!;
    const results = new Set(latency.samples.map((s) => s.labels.result));
    expect([...results].sort()).toEqual(['allowed', 'bad_request', 'denied']);
  });
});
