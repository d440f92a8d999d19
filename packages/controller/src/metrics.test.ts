// The controller's /metrics (issue 23): the SLIs from the objects' own timestamps and the cache, the
// controller-runtime names, the standby's leader samples, and an exposition Prometheus can read.
// On core's in-memory API model with the whole Manager, as manager.test.ts runs it.
import { keyOf, type PodClaim, type PodPool, parseTimestamp } from '@claimkit/core';
import type { ApiModel } from '@claimkit/core/model';
import { parseExposition } from '@claimkit/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Manager } from './manager.ts';
import type { Elector } from './manager-options.ts';
import { controllerMetricNames } from './metrics.ts';
import { kubelet, model, running, stopRunning, testConfig, until } from './testing/loop-harness.ts';

const NS = 'ns1';
afterEach(stopRunning);

async function startManager(m: ApiModel, extra: Partial<ConstructorParameters<typeof Manager>[0]> = {}) {
  const mgr = new Manager({
    config: testConfig({ concurrency: 2, resyncInterval: 0 }),
    client: m,
    source: m,
    ...extra,
  });
  running.push(mgr);
  await mgr.start();
  return mgr;
}

const pool = (name: string, minIdle: number, maxPods: number): PodPool => ({
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodPool',
  metadata: { name, namespace: NS },
  spec: {
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image: `${name}:1` }] },
    },
    minIdle,
    maxPods,
    releasePolicy: 'Recycle',
    drainSeconds: 0,
  },
});
const claim = (name: string, poolName: string): PodClaim => ({
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodClaim',
  metadata: { name, namespace: NS },
  spec: { poolName },
});
const phase = (m: ApiModel, name: string) => m.tryGetNow('PodClaim', { namespace: NS, name })?.status?.phase;

/** The metrics plan's names (/work/metrics-plan.md): the controller registers every one of them. */
const PLANNED = [
  'controller_runtime_reconcile_total',
  'controller_runtime_reconcile_errors_total',
  'controller_runtime_reconcile_time_seconds',
  'controller_runtime_max_concurrent_reconciles',
  'controller_runtime_active_workers',
  'workqueue_depth',
  'workqueue_adds_total',
  'workqueue_retries_total',
  'workqueue_queue_duration_seconds',
  'workqueue_work_duration_seconds',
  'workqueue_unfinished_work_seconds',
  'workqueue_longest_running_processor_seconds',
  'leader_election_master_status',
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
  'claimkit_reconcile_total',
  'claimkit_reconcile_duration_seconds',
  'claimkit_workqueue_depth',
  'claimkit_workers',
  'claimkit_workqueue_retries_total',
  'claimkit_write_conflicts_total',
  'claimkit_api_requests_total',
  'claimkit_api_request_duration_seconds',
  'claimkit_capture_takeovers_total',
  'claimkit_events_total',
  'claimkit_events_dropped_total',
  'claimkit_capture_sweeps_total',
  'claimkit_leader',
  'claimkit_shards',
  'claimkit_leader_takeovers_total',
  'claimkit_podclaims',
  'claimkit_podclaim_bind_duration_seconds',
  'claimkit_podclaim_rebind_duration_seconds',
  'claimkit_podclaim_lost_total',
  'claimkit_podclaims_pending',
  'claimkit_podclaim_oldest_pending_seconds',
  'claimkit_pool_pods',
  'claimkit_pool_target_idle',
  'claimkit_pool_max_pods',
  'claimkit_pool_headroom_pods',
  'claimkit_pool_binds_total',
  'claimkit_pool_releases_total',
  'claimkit_pool_recycles_total',
  'claimkit_pool_migrations_total',
  'claimkit_capture_duration_seconds',
  'claimkit_fenced_refusals_total',
  'claimkit_doctor_findings',
];

describe('controller metrics', () => {
  it('exports every name of the metrics plan, and controllerMetricNames() lists exactly what it registers', () => {
    const names = controllerMetricNames();
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual([...PLANNED].sort());
  });

  it('observes created -> Bound once per claim, per pool, from the claim timestamps; Lost -> Bound again as a rebind', async () => {
    const m = model();
    kubelet(m);
    // The controller's clock runs 42 s ahead of the API server's: the bind condition it writes is
    // 42 s after the claim's creationTimestamp, so the histogram shows the objects' timestamps, not
    // how long the test waited.
    const mgr = await startManager(m, { now: () => Date.now() + 42_000 });
    // A standby sees the same updates and observes none of them (sums across replicas count once).
    const standby = await startManager(m, { elector: { start: () => {}, stop: async () => {} } });
    await m.create(pool('web', 1, 5));
    await m.create(pool('api', 1, 5));
    await m.create(claim('c1', 'web'));
    await m.create(claim('c2', 'api'));
    await until('both bound', () => phase(m, 'c1') === 'Bound' && phase(m, 'c2') === 'Bound');
    const web = { namespace: NS, pool: 'web' };
    const api = { namespace: NS, pool: 'api' };
    await until(
      'observed',
      () => mgr.metrics.bindSeconds.count(web) === 1 && mgr.metrics.bindSeconds.count(api) === 1,
    );
    const c1 = m.tryGetNow('PodClaim', { namespace: NS, name: 'c1' })!;
    const boundAt = parseTimestamp(
      c1.status!.conditions!.find((c) => c.type === 'Bound')!.lastTransitionTime,
    )!;
    const expected = (boundAt - parseTimestamp(c1.metadata.creationTimestamp)!) / 1000;
    expect(expected).toBeGreaterThanOrEqual(41);
    expect(mgr.metrics.bindSeconds.sum(web)).toBeCloseTo(expected, 6);
    expect(mgr.metrics.binds.get(web)).toBe(1);
    await until('the standby cache shows c1 Bound', () =>
      standby.cachedClaims(NS).some((c) => c.metadata.name === 'c1' && c.status?.phase === 'Bound'),
    );
    expect(standby.metrics.bindSeconds.count(web)).toBe(0);

    // Lost -> Bound again: a rebind, not a second bind.
    await m.delete('Pod', { namespace: NS, name: c1.status!.podName! });
    await until('c1 rebound', () => {
      const c = m.tryGetNow('PodClaim', keyOf(c1));
      return c?.status?.phase === 'Bound' && c.status?.podName !== c1.status?.podName;
    });
    await until('rebind observed', () => mgr.metrics.rebindSeconds.count(web) === 1);
    expect(mgr.metrics.lost.get(web)).toBe(1);
    expect(mgr.metrics.bindSeconds.count(web)).toBe(1);
    expect(mgr.metrics.rebindSeconds.count(api)).toBe(0);

    // A restarted controller lists the Bound claims; it observes none of them again.
    const restarted = await startManager(m, { now: () => Date.now() + 42_000 });
    await m.patch('PodClaim', keyOf(c1), { metadata: { annotations: { touched: 'yes' } } });
    await until('the update seen', () =>
      restarted.cachedClaims(NS).some((c) => c.metadata.annotations?.touched === 'yes'),
    );
    expect(restarted.metrics.bindSeconds.count(web)).toBe(0);
    expect(restarted.metrics.rebindSeconds.count(web)).toBe(0);

    // A claim deleted releases its pod back to Idle (Recycle): a release and a recycle of its pool.
    await m.delete('PodClaim', { namespace: NS, name: 'c2' });
    await until('released', () => mgr.metrics.releases.get(api) + restarted.metrics.releases.get(api) === 1);
    expect(mgr.metrics.recycles.get(api) + restarted.metrics.recycles.get(api)).toBe(1);
    const text = mgr.metrics.registry.render();
    expect(text).toMatch(/^claimkit_podclaim_bind_duration_seconds_count\{namespace="ns1",pool="web"\} 1$/m);
    expect(text).toMatch(
      /^controller_runtime_reconcile_total\{controller="podclaim",result="success"\} \d+$/m,
    );
    expect(text).toMatch(/^workqueue_adds_total\{name="claimkit"\} \d+$/m);
    expect(text).toMatch(/^workqueue_queue_duration_seconds_count\{name="claimkit"\} \d+$/m);
    // The ceiling (--max-concurrency, default 32); the workers running now: 2 and any added.
    expect(text).toMatch(/^controller_runtime_max_concurrent_reconciles\{controller="podpool"\} 32$/m);
    expect(text).toMatch(/^claimkit_workers \d+$/m);
    expect(text).toMatch(/^leader_election_master_status\{name="claimkit-controller"\} 1$/m);
    expect(text).toMatch(/^claimkit_leader 1$/m);
    expect(text).toMatch(/^claimkit_shards 1$/m);
  });

  it('pool and pending gauges per pool, from the cache', async () => {
    const m = model();
    kubelet(m);
    const mgr = await startManager(m);
    await m.create(pool('web', 2, 5));
    await m.create(pool('tiny', 0, 1));
    await m.create(claim('w1', 'web'));
    await m.create(claim('t1', 'tiny'));
    await until('w1, t1 bound', () => phase(m, 'w1') === 'Bound' && phase(m, 't1') === 'Bound');
    await m.create(claim('t2', 'tiny')); // tiny is at maxPods: t2 waits
    const want = [
      'claimkit_pool_pods{namespace="ns1",pool="web",state="idle"} 2',
      'claimkit_pool_pods{namespace="ns1",pool="web",state="bound"} 1',
      'claimkit_pool_pods{namespace="ns1",pool="web",state="starting"} 0',
      'claimkit_pool_pods{namespace="ns1",pool="web",state="draining"} 0',
      'claimkit_pool_pods{namespace="ns1",pool="web",state="outdated"} 0',
      'claimkit_pool_target_idle{namespace="ns1",pool="web"} 2',
      'claimkit_pool_max_pods{namespace="ns1",pool="web"} 5',
      'claimkit_pool_headroom_pods{namespace="ns1",pool="web"} 2',
      'claimkit_podclaims_pending{namespace="ns1",pool="web"} 0',
      'claimkit_podclaim_oldest_pending_seconds{namespace="ns1",pool="web"} 0',
      'claimkit_pool_pods{namespace="ns1",pool="tiny",state="bound"} 1',
      'claimkit_pool_pods{namespace="ns1",pool="tiny",state="idle"} 0',
      'claimkit_pool_max_pods{namespace="ns1",pool="tiny"} 1',
      'claimkit_pool_headroom_pods{namespace="ns1",pool="tiny"} 0',
      'claimkit_podclaims_pending{namespace="ns1",pool="tiny"} 1',
    ];
    const lines = () => new Set(mgr.metrics.registry.render().split('\n'));
    await until(`gauges ${want.join(', ')}`, () => want.every((l) => lines().has(l)));
    await new Promise((r) => setTimeout(r, 1100));
    const oldest = /^claimkit_podclaim_oldest_pending_seconds\{namespace="ns1",pool="tiny"\} (\S+)$/m.exec(
      mgr.metrics.registry.render(),
    );
    expect(Number(oldest?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('a standby exports claimkit_leader and leader_election_master_status as 0; doctor findings come from its cache', async () => {
    const m = model();
    const never: Elector = { start: () => {}, stop: async () => {} };
    const mgr = await startManager(m, { elector: never });
    const text = mgr.metrics.registry.render();
    expect(text).toMatch(/^claimkit_leader 0$/m);
    expect(text).toMatch(/^leader_election_master_status\{name="claimkit-controller"\} 0$/m);
    expect(mgr.leading).toBe(false);

    // Nothing reconciles on a standby, so a claim Bound to a pod that does not exist stays broken.
    await m.create(pool('web', 0, 5));
    await m.create({ ...claim('ghost', 'web'), spec: { poolName: 'web', podName: 'cn-gone' } });
    await m.patchStatus('PodClaim', { namespace: NS, name: 'ghost' }, { status: { phase: 'Bound' } });
    await until('cached', () => mgr.cachedClaims(NS).some((c) => c.status?.phase === 'Bound'));
    await mgr.refreshDoctor();
    const after = mgr.metrics.registry.render();
    expect(after).toMatch(/^claimkit_doctor_findings\{check="bound_to_missing_pod"\} 1$/m);
    expect(after).toMatch(/^claimkit_doctor_findings\{check="finalizer_stuck"\} 0$/m);
  });

  it('every line of /metrics is valid Prometheus text exposition, label escaping included', async () => {
    const m = model();
    kubelet(m);
    const mgr = await startManager(m);
    await m.create(pool('web', 1, 3));
    await m.create(claim('c1', 'web'));
    await until('bound', () => phase(m, 'c1') === 'Bound');
    await mgr.refreshDoctor();
    // Label values that need escaping (no real label carries these; the exposition must still be valid).
    mgr.metrics.events.inc({ type: 'Warning', reason: 'quote " backslash \\ newline \n end' });
    const families = parseExposition(mgr.metrics.registry.render());
    expect(families.map((f) => f.name).sort()).toEqual([...controllerMetricNames()].sort());
    const events = families.find((f) => f.name === 'claimkit_events_total')!;
    expect(events.samples.map((s) => s.labels.reason)).toContain('quote " backslash \\ newline \n end');
    for (const f of families) expect(f.help, f.name).not.toBe('');
    const bind = families.find((f) => f.name === 'claimkit_podclaim_bind_duration_seconds')!;
    expect(bind.type).toBe('histogram');
    expect(families.find((f) => f.name === 'process_cpu_seconds_total')!.type).toBe('counter');
  });
});
