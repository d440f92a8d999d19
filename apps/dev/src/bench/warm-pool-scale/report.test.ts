// The run's figures and its stored result from what the phases measured: a run of 10 steady and 5
// burst claims, its numbers made up so each figure can be followed by hand.
import { describe, expect, it } from 'vitest';
import { planPools } from '../stats.ts';
import { warmPoolScaleRows } from '../warm-pool-scale.ts';
import { type FiguresInput, warmPoolScaleFigures } from './figures.ts';
import type { WarmPoolScaleOptions } from './options.ts';
import { type ReportInput, warmPoolScaleReport } from './report.ts';
import type { ClaimTimes } from './watches.ts';

const requests = (podPatch: number, claimUpdate: number, claimStatus: number, conflicts: number) =>
  [
    `claimkit_api_requests_total{code="200",resource="Pod",verb="patch"} ${podPatch}`,
    `claimkit_api_requests_total{code="200",resource="PodClaim",verb="update"} ${claimUpdate}`,
    `claimkit_api_requests_total{code="200",resource="PodClaim",verb="patchStatus"} ${claimStatus}`,
    `claimkit_api_requests_total{code="409",resource="Pod",verb="patch"} ${conflicts}`,
  ].join('\n');
const reconciles = (n: number, seconds: number, events: number) =>
  [
    `claimkit_reconcile_total{kind="PodPool",result="ok"} ${n}`,
    `claimkit_reconcile_duration_seconds_count{kind="PodPool"} ${n}`,
    `claimkit_reconcile_duration_seconds_sum{kind="PodPool"} ${seconds}`,
    `claimkit_events_total{type="Normal"} ${events}`,
  ].join('\n');

const claims = new Map<string, ClaimTimes>([
  ...Array.from({ length: 10 }, (_, i): [string, ClaimTimes] => [
    `ns/s-${i}`,
    { sentAt: i * 100 - 5, addedAt: i * 100, boundAt: i * 100 + 30 },
  ]),
  ...Array.from({ length: 5 }, (_, i): [string, ClaimTimes] => [
    `ns/b-${i}`,
    { sentAt: 5000, addedAt: 5010, boundAt: 5100 + i * 10 },
  ]),
]);

const options: WarmPoolScaleOptions = {
  warm: 20,
  refill: 15,
  steady: 10,
  rate: 10,
  burst: 5,
  namespaces: 1,
  pools: 1,
  key: 'warm-pool-scale-20x1',
  controllerArgs: ['--disable-claim-events'],
  compare: { baseline: { p50Ms: 20, p99Ms: 60, controllerCpuMsPerClaim: 1, podPoolReconcileMeanMs: 2 } },
  concurrency: 8,
  rawWrites: 2000,
  cleanup: false,
};

const steady = {
  names: Array.from({ length: 10 }, (_, i) => `ns/s-${i}`),
  t0: 0,
  schedule: Array.from({ length: 10 }, (_, i) => i * 100),
  probeWindows: [],
  // 0.02 CPU-s of the controller, 0.2 of the API server over 10 binds.
  cpu0: new Map([
    ['controller', 1],
    ['kube-apiserver', 2],
    ['controller shard 0', 0.5],
    ['controller shard 1', 0.5],
  ]),
  cpu1: new Map([
    ['controller', 1.02],
    ['kube-apiserver', 2.2],
    ['controller shard 0', 0.515],
    ['controller shard 1', 0.505],
  ]),
  metricsBefore: `${requests(0, 0, 0, 0)}\n${reconciles(5, 0.01, 1)}`,
  // 3 writes per bind, one 409.
  metricsAfter: `${requests(10, 10, 10, 1)}\n${reconciles(25, 0.05, 11)}`,
  cpu: {
    controller: { cpuSeconds: 0.02, cores: 0.02 },
    'controller shard 0': { cpuSeconds: 0.015, cores: 0.015 },
  },
  seconds: 1.04,
  sendLateMax: 1.26,
  rssMb: 90,
};
const burst = {
  names: Array.from({ length: 5 }, (_, i) => `ns/b-${i}`),
  metricsBefore: steady.metricsAfter,
  metricsAfter: `${requests(15, 15, 15, 1)}\n${reconciles(30, 0.06, 16)}`,
  refillSeconds: 2.04,
  refillAfterSeconds: 3.06,
  createSeconds: 0.01,
  seconds: 0.14,
  cpu: { controller: { cpuSeconds: 0.01, cores: 0.07 } },
  rssMb: 95,
};
const raw = {
  concurrency: 16,
  writes: 35,
  configMapCreatesPerSec: 512.34,
  podsPatched: 15,
  // 100 binds/s at 3 writes a bind: the 5-claim burst's target is 2 x 5/100 s.
  podPatchesPerSec: 300,
  claimsObserved: 15,
  metricsEnd: [
    'claimkit_api_requests_total{code="201",resource="Pod",verb="create"} 37',
    // One line per shard: the largest process's heap.
    'nodejs_heap_size_used_bytes 50000000',
    'nodejs_heap_size_used_bytes 60000000',
    'nodejs_heap_size_total_bytes 80000000',
    'nodejs_external_memory_bytes 2000000',
  ].join('\n'),
  rssMb: 97,
};
const figuresInput: FiguresInput = { o: options, claims, steady, burst, raw, rssPeakSampled: 120 };

describe('warm-pool-scale figures', () => {
  const f = warmPoolScaleFigures(figuresInput);

  it('latencies of each phase, requests per phase and over the run', () => {
    expect(f.steadyLatency.addedToBound).toMatchObject({ n: 10, p50Ms: 30, p99Ms: 30 });
    expect(f.burstLatency.addedToBound).toMatchObject({ n: 5, p50Ms: 110, maxMs: 130 });
    expect(f.steadyOverTime).toMatchObject([{ fromSecond: 0, n: 10 }]);
    expect(f.steadyRequests).toMatchObject({ bindWrites: 30, writesPerBind: 3, conflicts409: 1 });
    expect(f.burstRequests).toMatchObject({ bindWrites: 15, writesPerBind: 3, conflicts409: 0 });
    expect(f.podCreates).toBe(37);
    expect([f.steadyReconcileCount, f.steadyEvents]).toEqual([20, 10]);
    expect(f.steadyReconciles).toEqual({ PodPool: { n: 20, seconds: 0.04, meanMs: 2 } });
  });

  it("the burst's target from the API server's measured capacity", () => {
    expect(f.bindsPerSecCapacity).toBe(100);
    expect(f.burstTargetSeconds).toBeCloseTo(0.1);
  });

  it("issue 22's efficiency from the steady phase's CPU, and the peak RSS", () => {
    expect(f.steadyEfficiency).toMatchObject({
      controllerCpuSecondsPerBind: 0.002,
      apiServerCpuSecondsPerBind: 0.02,
      cpuRatio: { value: 0.1, met: true },
      controllerCpuMsPerClaim: { value: 2, met: true },
      conflictsPerBind: { value: 0.1, met: false },
      writesPerBind: { value: 3, met: false },
    });
    expect(f.rssPeakMb).toBe(120);
    expect(warmPoolScaleFigures({ ...figuresInput, rssPeakSampled: 0 }).rssPeakMb).toBe(97);
  });

  it('a scaled run against the stored preset run, or against none', () => {
    expect(f.comparison).toEqual({
      baseline: options.compare!.baseline,
      p50Ratio: { value: 1.5, target: 1.5, met: true },
      p99Ratio: { value: 0.5, target: 1.5, met: true },
      controllerCpuPerClaimRatio: { value: 2, target: 1.2, met: false },
      podPoolReconcileMeanMs: { value: 2, baseline: 2 },
      rssPeakMb: { value: 120, target: 400, met: true },
    });
    const none = warmPoolScaleFigures({
      ...figuresInput,
      o: { ...options, compare: { baseline: undefined } },
    });
    expect(none.comparison).toEqual({
      baseline: 'none stored',
      rssPeakMb: { value: 120, target: 400, met: true },
    });
    const preset = warmPoolScaleFigures({ ...figuresInput, o: { ...options, compare: undefined } });
    expect(preset.comparison).toBeUndefined();
  });
});

describe('warm-pool-scale report', () => {
  const input = (over: Partial<ReportInput> = {}): ReportInput => ({
    o: options,
    run: {
      plan: planPools(options),
      namespaces: ['ns'],
      maxPods: 35,
      perNamespace: 35,
      loadBefore: [0.5, 0.4, 0.3],
    },
    shards: 1,
    warm: { warmSeconds: 12.34 },
    settled: { settleSeconds: 4.02, quietCores: 0.123, rssMb: 80 },
    steady,
    burst,
    raw,
    figures: warmPoolScaleFigures(figuresInput),
    createErrors: ['s-3: boom'],
    podsSeen: 36,
    end: { loadAvgAfter: [1, 0.9, 0.8], steadyStartedAt: '2026-12-01T00:00:00.000Z', givenCluster: false },
    ...over,
  });

  it('the fields stored in bench/results.json, in their order', () => {
    const stored = JSON.parse(JSON.stringify(warmPoolScaleReport(input())));
    expect(Object.keys(stored)).toEqual([
      'method',
      'load',
      'warm',
      'maxPods',
      'namespaces',
      // pools: only with more than one
      'controllerArgs',
      'arrivals',
      'steadyClaims',
      'rate',
      'burstClaims',
      'concurrency',
      'warmSeconds',
      'settle',
      'steady',
      'burst',
      'createErrors',
      'createErrorSamples',
      'pods',
      'raw',
      'rssMb',
      'heapMbEnd',
      'comparison',
      'requestsWholeRun',
      'claimsObserved',
      'targets',
    ]);
    expect(Object.keys(stored.steady)).toEqual([
      'startedAt',
      'seconds',
      'sendLateMaxMs',
      'latency',
      'latencyOverTime',
      'requests',
      'reconciles',
      'reconcilesByKind',
      'events',
      'cpu',
      'efficiency',
    ]);
    expect(Object.keys(stored.burst)).toEqual([
      'poolRefillSeconds',
      'refillAfterSeconds',
      'createSeconds',
      'allBoundSeconds',
      'bindsPerSec',
      'latency',
      'requests',
      'cpu',
      'targetSeconds',
    ]);
  });

  it('each phase rounded, over-creation counted, the targets met or not', () => {
    const r = warmPoolScaleReport(input());
    expect(r).toMatchObject({
      load: { loadAvgBefore: [0.5, 0.4, 0.3], loadAvgAfter: [1, 0.9, 0.8] },
      arrivals: 'even',
      warmSeconds: 12.3,
      settle: { seconds: 4, cores: 0.12, limitCores: 0.3 },
      steady: {
        startedAt: '2026-12-01T00:00:00.000Z',
        seconds: 1,
        sendLateMaxMs: 1.3,
        reconciles: 20,
        events: 10,
      },
      burst: {
        poolRefillSeconds: 2,
        refillAfterSeconds: 3.1,
        allBoundSeconds: 0.1,
        bindsPerSec: 35.7,
        targetSeconds: 0.1,
      },
      createErrors: 1,
      createErrorSamples: ['s-3: boom'],
      pods: { needed: 35, createsIssued: 37, seenByBenchWatch: 36, overCreation: 2 },
      raw: {
        configMapCreatesPerSec: 512.3,
        podPatchesPerSec: 300,
        concurrency: 16,
        bindsPerSecCapacity: 100,
      },
      rssMb: { afterWarm: 80, afterSteady: 90, afterBurst: 95, end: 97, peak: 120 },
      heapMbEnd: { used: 60, total: 80, external: 2 },
      claimsObserved: 15,
      targets: {
        meets: {
          steadyP50: true,
          steadyP99: true,
          burst: false,
          writesPerBind: false,
          rss: true,
          overCreation: false,
        },
      },
    });
    expect(r.pools).toBeUndefined();
    expect(r.method).toContain('kwok; PodPool minIdle 20, maxPods 35:');
    expect(r.method).toContain('--concurrency 8 --disable-claim-events, --namespace (one namespace).');
    expect(r.method).toContain('35 ConfigMap creates, then a merge patch of 15 Bound pods');
    expect(r.method).not.toContain('Shards:');
    expect(r.method).not.toContain('CPU profile:');
  });

  it("with shards: each one's share of the steady CPU; with a memory limit: what the cgroup saw", () => {
    const memoryLimit = { limitMb: 512, oomKills: 0, cgroupPeakMb: 300, died: null };
    const r = warmPoolScaleReport(
      input({ shards: 2, end: { ...input().end, memoryLimit }, o: { ...options, cpuProfDir: '/p' } }),
    );
    expect(r.shards).toEqual({
      count: 2,
      cpuMsPerClaim: [1.5, 0.5],
      cores: [0.015, Number.NaN],
      busiestCpuMsPerClaim: 1.5,
    });
    expect(r.memoryLimit).toEqual(memoryLimit);
    expect(r.method).toContain('Shards: 2 controller processes');
    expect(r.method).toContain('CPU profile:');
  });

  it('the rows said with met/missed: latency, the burst, efficiency, the comparison', () => {
    const rows = warmPoolScaleRows({ ...warmPoolScaleReport(input()) });
    expect(rows.map(([name, t]) => `${name}: ${t.value} ${t.met ? 'met' : 'MISSED'}`)).toEqual([
      'steady: claim -> Bound p50 ms: 30 met',
      'steady: claim -> Bound p99 ms: 30 met',
      'burst: all Bound, s: 0.1 met',
      'steady: controller / API server CPU per bind: 0.1 met',
      'steady: controller CPU ms per claim: 2 met',
      'steady: 409s per bind: 0.1 MISSED',
      'steady: writes per bind: 3 MISSED',
      'vs the preset run: p50 ratio: 1.5 met',
      'vs the preset run: p99 ratio: 0.5 met',
      'vs the preset run: controller CPU per claim ratio: 2 MISSED',
      'controller RSS peak MB: 120 met',
    ]);
  });
});
