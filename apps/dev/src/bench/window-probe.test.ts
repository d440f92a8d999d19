import { describe, expect, it } from 'vitest';
import {
  apiServerSeries,
  controllerSeries,
  controllerTimeSeries,
  etcdSeries,
  etcdServerBetween,
  etcdServerSeries,
  eventLoopMaxMs,
  seriesBetween,
  WindowProbe,
  windowLine,
} from './window-probe.ts';

// The shapes the two servers expose (label sets as kube-apiserver 1.3x and the controller print them).
const apiServer = (patchPods: number[], putClaims: number[]) =>
  [
    ...['0.005', '0.025', '1', '+Inf'].map(
      (le, i) =>
        `apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1",le="${le}"} ${patchPods[i]}`,
    ),
    `apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1"} ${patchPods[4]}`,
    `apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1"} ${patchPods[3]}`,
    ...['0.005', '0.025', '1', '+Inf'].map(
      (le, i) =>
        `apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="claimkit.dev",resource="podclaims",scope="resource",subresource="status",verb="PATCH",version="v1alpha1",le="${le}"} ${putClaims[i]}`,
    ),
    `apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="claimkit.dev",resource="podclaims",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} ${putClaims[4]}`,
    `apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="claimkit.dev",resource="podclaims",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} ${putClaims[3]}`,
    'apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} 40',
    'apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 7',
    'etcd_request_duration_seconds_bucket{operation="update",type="/registry/pods",le="0.1"} 3',
    'etcd_request_duration_seconds_bucket{operation="update",type="/registry/pods",le="+Inf"} 4',
    'etcd_request_duration_seconds_sum{operation="update",type="/registry/pods"} 2.1',
    'etcd_request_duration_seconds_count{operation="update",type="/registry/pods"} 4',
    'etcd_request_duration_seconds_count{operation="get",type="/registry/leases"} 9',
    'etcd_request_duration_seconds_bucket{group="claimkit.dev",operation="create",resource="podclaims",le="+Inf"} 2',
    'etcd_request_duration_seconds_sum{group="claimkit.dev",operation="create",resource="podclaims"} 0.01',
    'etcd_request_duration_seconds_count{group="claimkit.dev",operation="create",resource="podclaims"} 2',
    'etcd_request_duration_seconds_count{group="",operation="update",resource="podtemplates"} 2',
  ].join('\n');

const controller = (getPods: number) =>
  [
    `claimkit_api_request_duration_seconds_bucket{resource="Pod",verb="get",le="0.1"} ${getPods}`,
    `claimkit_api_request_duration_seconds_bucket{resource="Pod",verb="get",le="+Inf"} ${getPods}`,
    `claimkit_api_request_duration_seconds_sum{resource="Pod",verb="get"} ${getPods * 0.01}`,
    `claimkit_api_request_duration_seconds_count{resource="Pod",verb="get"} ${getPods}`,
    'claimkit_api_request_duration_seconds_count{resource="Pod",verb="watch"} 3',
  ].join('\n');

describe('the window probe', () => {
  it("keeps the API server's pod and claim requests by verb and subresource, not watches or other resources; etcd's for pods", () => {
    const s = apiServerSeries(apiServer([1, 2, 3, 4, 2], [5, 5, 5, 5, 0.01]));
    expect([...s.keys()].sort()).toEqual(['PATCH podclaims/status', 'PATCH pods']);
    expect(s.get('PATCH pods')?.count).toBe(4);
    // Older servers label etcd's series by key prefix (`type`), newer ones by `resource`.
    expect([...etcdSeries(apiServer([0, 0, 0, 0, 0], [0, 0, 0, 0, 0])).keys()].sort()).toEqual([
      'create podclaims',
      'update /registry/pods',
    ]);
    expect([...controllerSeries(controller(5)).keys()]).toEqual(['get Pod']);
    const time = controllerTimeSeries(
      [
        'nodejs_gc_duration_seconds_bucket{kind="major",le="0.1"} 1',
        'nodejs_gc_duration_seconds_bucket{kind="major",le="+Inf"} 3',
        'nodejs_gc_duration_seconds_sum{kind="major"} 0.9',
        'nodejs_gc_duration_seconds_count{kind="major"} 3',
        'claimkit_reconcile_duration_seconds_count{kind="PodClaim",result="requeue"} 2',
        'workqueue_queue_duration_seconds_count{name="claimkit"} 7',
      ].join('\n'),
    );
    expect([...time.keys()]).toEqual(['gc major', 'reconcile PodClaim requeue', 'queue wait']);
    expect(seriesBetween(new Map(), time)['gc major']).toEqual({
      n: 3,
      meanMs: 300,
      p50Ms: 100,
      p99Ms: 100,
      over100Ms: 2,
    });
  });

  it('summarises what each series saw between two scrapes and leaves out the series that saw nothing', () => {
    const a = apiServerSeries(apiServer([1, 2, 3, 4, 2], [5, 5, 5, 5, 0.01]));
    const b = apiServerSeries(apiServer([11, 12, 13, 24, 24.2], [5, 5, 5, 5, 0.01]));
    // 20 new pod patches: 10 under 5 ms, 10 above 1 s.
    expect(seriesBetween(a, b)).toEqual({ 'PATCH pods': { n: 20, meanMs: 1110, p50Ms: 5, p99Ms: 1000 } });
  });

  it('scrapes at every window boundary, patches the canary, and times each patch and its watch event', async () => {
    let gets = 0;
    const seen: number[] = [];
    let probe: WindowProbe;
    probe = new WindowProbe({
      windowMs: 150,
      canaryMs: 50,
      scrapeController: async () => {
        gets += 10;
        return controller(gets);
      },
      scrapeApiServer: async () => apiServer([0, 0, 0, 0, 0], [0, 0, 0, 0, 0]),
      // The API server answers a patch in 10 ms; its watch event follows 20 ms after the answer,
      // except patch 3's, which never comes (patch 4's event then stands for both).
      patchCanary: async (seq) => {
        await new Promise((r) => setTimeout(r, 10));
        if (seq !== 3)
          setTimeout(() => {
            seen.push(seq);
            probe.canarySeen(seq, performance.now());
          }, 20);
      },
      say: () => {},
    });
    const t0 = await probe.start();
    await new Promise((r) => setTimeout(r, t0 + 460 - performance.now()));
    const windows = await probe.stop();
    expect(windows.length).toBeGreaterThanOrEqual(3);
    const first = windows[0]!;
    expect(first.fromSecond).toBeLessThanOrEqual(0);
    expect(first.controller['get Pod']?.n).toBe(10);
    expect(first.apiServer).toEqual({});
    const patches = windows.reduce((n, w) => n + w.canary.patchMs.n, 0);
    expect(patches).toBeGreaterThanOrEqual(5);
    for (const w of windows) {
      if (w.canary.patchMs.n === 0) continue;
      expect(w.canary.patchMs.p50Ms).toBeGreaterThanOrEqual(9);
      expect(w.canary.failed).toBe(0);
    }
    // Patch 3's event never came, yet patch 4's covered it: every answered patch but the last few was seen.
    expect(seen).not.toContain(3);
    const delays = windows.flatMap((w) =>
      w.canary.watchAfterAnswerMs.n ? [w.canary.watchAfterAnswerMs.p50Ms] : [],
    );
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(15);
  });
});

describe('eventLoopMaxMs', () => {
  it("takes the longest shard's max delay, less the 10 ms sampling interval; none without the gauge", () => {
    expect(
      eventLoopMaxMs(
        [
          '# TYPE nodejs_eventloop_lag_max_seconds gauge',
          'nodejs_eventloop_lag_max_seconds 0.0512',
          'nodejs_eventloop_lag_max_seconds 0.2503',
          'nodejs_eventloop_lag_p99_seconds 0.9',
        ].join('\n'),
      ),
    ).toBe(240);
    expect(eventLoopMaxMs('nodejs_eventloop_lag_max_seconds 0.004')).toBe(0);
    expect(eventLoopMaxMs('nodejs_eventloop_lag_seconds 0.02')).toBeUndefined();
  });
});

describe('windowLine', () => {
  it("puts a window's claims beside the pod patch's p99 at both ends, the slowest series and the canary", () => {
    const probe = {
      fromSecond: 50,
      toSecond: 60,
      controller: {
        'patch Pod': { n: 300, meanMs: 900, p50Ms: 20, p99Ms: 3100 },
        'update PodClaim': { n: 300, meanMs: 5, p50Ms: 3, p99Ms: 40 },
        'get Pod': { n: 2, meanMs: 5, p50Ms: 3, p99Ms: 9 },
      },
      controllerTime: {
        'gc major': { n: 2, meanMs: 160, p50Ms: 100, p99Ms: 1000, over100Ms: 1 },
        'gc minor': { n: 40, meanMs: 2, p50Ms: 1, p99Ms: 9, over100Ms: 0 },
        'queue wait': { n: 900, meanMs: 1, p50Ms: 0.1, p99Ms: 10, over100Ms: 3 },
      },
      eventLoopMaxMs: 240,
      apiServer: { 'PATCH pods': { n: 300, meanMs: 880, p50Ms: 20, p99Ms: 3000 } },
      etcd: {},
      canary: {
        patchMs: { n: 20, p50Ms: 6, p90Ms: 9, p99Ms: 2900, maxMs: 2900, meanMs: 150 },
        watchAfterAnswerMs: { n: 19, p50Ms: 0.1, p90Ms: 1, p99Ms: 2, maxMs: 2, meanMs: 0.3 },
        failed: 0,
        neverSeen: 1,
      },
    };
    expect(
      windowLine({ fromSecond: 50, n: 300, p99Ms: 3500, stagesP99Ms: { addedToPodLabelled: 3200 }, probe }),
    ).toBe(
      '50s: 300 claims p99 3500 ms (claim seen -> pod labelled 3200) | controller p99: patch Pod 3100; slowest patch Pod 3100, update PodClaim 40 | API server p99: PATCH pods 3000; slowest PATCH pods 3000 | etcd slowest - | controller GC major 320 ms (1 over 100 ms), minor 80 ms (0 over 100 ms); queue waits over 100 ms 3; event loop stalled 240 ms at most | canary patch max 2900, watch after answer max 2 (1 never seen)',
    );
    expect(windowLine({ fromSecond: 0, n: 3, p99Ms: 10, stagesP99Ms: { addedToPodLabelled: 4 } })).toBe(
      '0s: 3 claims p99 10 ms (claim seen -> pod labelled 4)',
    );
  });
});

describe("etcd's own metrics", () => {
  const etcd = (commits: number, compactions: number, ms: number, keys: number) =>
    [
      `etcd_disk_backend_commit_duration_seconds_bucket{le="0.008"} ${commits - 1}`,
      `etcd_disk_backend_commit_duration_seconds_bucket{le="0.1"} ${commits - 1}`,
      `etcd_disk_backend_commit_duration_seconds_bucket{le="+Inf"} ${commits}`,
      `etcd_disk_backend_commit_duration_seconds_sum ${commits * 0.002}`,
      `etcd_disk_backend_commit_duration_seconds_count ${commits}`,
      `etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_bucket{le="+Inf"} ${compactions}`,
      `etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_sum ${ms}`,
      `etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_count ${compactions}`,
      `etcd_debugging_mvcc_db_compaction_keys_total ${keys}`,
    ].join('\n');

  it('says how many compactions ran in a window, for how long, over how many keys, beside the commits', () => {
    const w = etcdServerBetween(
      etcdServerSeries(etcd(100, 3, 1928, 31804)),
      etcdServerSeries(etcd(300, 5, 3982, 65750)),
    );
    expect(w.compactions).toBe(2);
    expect(w.compactionMs).toBe(2054);
    expect(w.compactedKeys).toBe(33946);
    expect(w.commits?.n).toBe(200);
    // Both windows have one commit above 100 ms: none of the 200 new ones is.
    expect(w.commits?.over100Ms).toBe(0);
  });
});

describe('a cancelled window probe', () => {
  it('patches and scrapes no more (a failed run leaves nothing running)', async () => {
    let patches = 0;
    let scrapes = 0;
    const probe = new WindowProbe({
      windowMs: 40,
      canaryMs: 20,
      scrapeController: async () => {
        scrapes++;
        return '';
      },
      scrapeApiServer: async () => '',
      patchCanary: async () => {
        patches++;
      },
      say: () => {},
    });
    await probe.start();
    await new Promise((r) => setTimeout(r, 100));
    probe.cancel();
    const [p, s] = [patches, scrapes];
    expect(p).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 150));
    expect([patches, scrapes]).toEqual([p, s]);
  });
});
