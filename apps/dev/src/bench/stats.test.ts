import { seededRandom } from '@claimkit/e2e/harness';
import { describe, expect, it } from 'vitest';
import {
  arrivalSchedule,
  atLeast,
  atMost,
  classifyRequests,
  diffCounts,
  efficiency,
  histogramBetween,
  histogramQuantile,
  histogramSnapshot,
  histogramSummaryMs,
  latencySummary,
  memoryLimitSuffix,
  mergeResults,
  parseCounter,
  percentile,
  planPools,
  poissonSchedule,
  reconcilesByKind,
  requestCounts,
  splitEvenly,
  targetTable,
  warmPoolBaseline,
  warmPoolScaleKey,
} from './stats.ts';

describe('percentile (nearest rank)', () => {
  const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted on purpose

  it('picks the nearest-rank sample', () => {
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 90)).toBe(90);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile(xs, 100)).toBe(100);
    expect(percentile(xs, 0)).toBe(1);
    expect(percentile([7], 99)).toBe(7);
  });

  it('is NaN without samples and leaves its input unsorted', () => {
    expect(percentile([], 50)).toBeNaN();
    const input = [3, 1, 2];
    percentile(input, 50);
    expect(input).toEqual([3, 1, 2]);
  });

  it('summarises p50/p90/p99/max/mean to one decimal', () => {
    expect(latencySummary([1.04, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toEqual({
      n: 10,
      p50Ms: 5,
      p90Ms: 9,
      p99Ms: 10,
      maxMs: 10,
      meanMs: 5.5,
    });
  });
});

const METRICS = `# HELP claimkit_api_requests_total Kubernetes API requests by verb, resource and HTTP code.
# TYPE claimkit_api_requests_total counter
claimkit_api_requests_total{code="200",resource="Pod",verb="patch"} 10
claimkit_api_requests_total{code="200",resource="PodClaim",verb="update"} 10
claimkit_api_requests_total{code="200",resource="PodClaim",verb="patchStatus"} 10
claimkit_api_requests_total{code="409",resource="Pod",verb="patch"} 2
claimkit_api_requests_total{code="201",resource="Pod",verb="create"} 4
claimkit_api_requests_total{code="200",resource="PodPool",verb="patchStatus"} 1
claimkit_api_requests_total{code="201",resource="Event",verb="create"} 5
claimkit_api_requests_total{code="200",resource="Pod",verb="list"} 3
claimkit_api_requests_total{code="200",resource="PodClaim",verb="get"} 1
claimkit_api_requests_total_other{code="200",resource="Pod",verb="list"} 99
claimkit_reconcile_total{kind="PodClaim",result="success"} 7
`;

describe('request counts from /metrics', () => {
  it('parses one metric only, with its labels', () => {
    expect(parseCounter(METRICS, 'claimkit_reconcile_total')).toEqual([
      { labels: { kind: 'PodClaim', result: 'success' }, value: 7 },
    ]);
    expect(parseCounter(METRICS, 'claimkit_api_requests_total')).toHaveLength(9);
  });

  it('diffs two scrapes and splits reads, writes, Events and the bind writes per claim', () => {
    const before = requestCounts(
      'claimkit_api_requests_total{code="200",resource="Pod",verb="list"} 1\nclaimkit_api_requests_total{code="200",resource="Pod",verb="patch"} 10\n',
    );
    const d = diffCounts(before, requestCounts(METRICS));
    expect(d['list Pod 200']).toBe(2);
    expect(d['patch Pod 200']).toBeUndefined(); // unchanged
    const c = classifyRequests(d, 10);
    expect(c).toMatchObject({
      reads: 3,
      writes: 2 + 10 + 10 + 4 + 1,
      eventWrites: 5,
      podCreates: 4,
      bindWrites: 20,
      poolWrites: 1,
      errors: 2,
      conflicts409: 2,
      conflictsPerBind: 0.2,
      readsPerClaim: 0.3,
      writesPerClaim: 2.7,
      eventWritesPerClaim: 0.5,
      writesPerBind: 2,
    });
  });
});

describe('mergeResults', () => {
  it('sets one entry and keeps every other section and key', () => {
    const existing = { webhook: { p99: 1 }, controller: { binds: { n: 1 }, date: 'x' } };
    const merged = mergeResults(existing, 'controller', 'warm-pool-scale', { p50: 2 });
    expect(merged).toEqual({
      webhook: { p99: 1 },
      controller: { binds: { n: 1 }, date: 'x', 'warm-pool-scale': { p50: 2 } },
    });
    expect(existing.controller).toEqual({ binds: { n: 1 }, date: 'x' }); // not mutated
    expect(mergeResults(merged, 'controller', 'binds', { n: 2 }).controller).toMatchObject({
      binds: { n: 2 },
      'warm-pool-scale': { p50: 2 },
    });
  });

  it('starts anew from something that is not an object', () => {
    expect(mergeResults(null, 'controller', 'k', 1)).toEqual({ controller: { k: 1 } });
    expect(mergeResults([1], 'controller', 'k', 1)).toEqual({ controller: { k: 1 } });
    expect(mergeResults({ controller: 'bad' }, 'controller', 'k', 1)).toEqual({ controller: { k: 1 } });
  });
});

describe('arrivalSchedule', () => {
  it('spaces arrivals 1/rate apart from 0', () => {
    expect(arrivalSchedule(4, 30).map(Math.round)).toEqual([0, 33, 67, 100]);
    expect(arrivalSchedule(0, 30)).toEqual([]);
  });
});

describe('poissonSchedule', () => {
  it('is the same schedule for the same seed and another for another seed', () => {
    expect(poissonSchedule(100, 45, 7)).toEqual(poissonSchedule(100, 45, 7));
    expect(poissonSchedule(100, 45, 8)).not.toEqual(poissonSchedule(100, 45, 7));
    const r = seededRandom(1);
    const xs = Array.from({ length: 1000 }, r);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
  });

  it('arrives in order at the mean rate, with exponential gaps (mean = sd)', () => {
    const n = 20_000;
    const s = poissonSchedule(n, 45, 42);
    expect(s).toHaveLength(n);
    const gaps = s.map((t, i) => t - (i === 0 ? 0 : s[i - 1]!));
    expect(Math.min(...gaps)).toBeGreaterThan(0);
    // The mean of 20,000 exponential gaps is within ~0.7 % (1 sd) of 1/rate; allow 3 %.
    const rate = n / (s.at(-1)! / 1000);
    expect(rate).toBeGreaterThan(45 * 0.97);
    expect(rate).toBeLessThan(45 * 1.03);
    const mean = gaps.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / n);
    expect(sd / mean).toBeGreaterThan(0.95);
    expect(sd / mean).toBeLessThan(1.05);
    expect(poissonSchedule(0, 45, 1)).toEqual([]);
  });
});

describe('planPools', () => {
  it('keeps warm-pool-scale as it was: one pool, minIdle 3700, maxPods 3900', () => {
    expect(planPools({ warm: 3700, refill: 200, namespaces: 1, pools: 1 })).toEqual([
      { namespace: 0, name: 'warm', minIdle: 3700, maxPods: 3900 },
    ]);
  });

  it('spreads 37,000 pods over 13 namespaces, one pool each, under 3,000 per namespace', () => {
    const plan = planPools({ warm: 37_000, refill: 200, namespaces: 13, pools: 13 });
    expect(plan.map((p) => p.namespace)).toEqual(Array.from({ length: 13 }, (_, i) => i));
    expect(plan.every((p) => p.name === 'warm' && p.maxPods <= 3000)).toBe(true);
    expect(plan.reduce((a, p) => a + p.minIdle, 0)).toBe(37_000);
    expect(plan.reduce((a, p) => a + p.maxPods, 0)).toBe(37_200);
  });

  it('puts several pools in one namespace (agent-sandbox: 4 x 113, refilling 3,000)', () => {
    expect(planPools({ warm: 452, refill: 3000, namespaces: 1, pools: 4 })).toEqual(
      [0, 1, 2, 3].map((i) => ({ namespace: 0, name: `warm-${i}`, minIdle: 113, maxPods: 863 })),
    );
    expect(() => planPools({ warm: 10, refill: 0, namespaces: 3, pools: 4 })).toThrow();
  });

  it('splits evenly, the remainder to the first', () => {
    expect(splitEvenly(10, 3)).toEqual([4, 3, 3]);
    expect(splitEvenly(2, 3)).toEqual([1, 1, 0]);
  });
});

describe('targets', () => {
  it('meets at most / at least, never with NaN', () => {
    expect(atMost(2, 2)).toEqual({ value: 2, target: 2, met: true });
    expect(atMost(2.1, 2).met).toBe(false);
    expect(atMost(Number.NaN, 2).met).toBe(false);
    expect(atLeast(0.9, 0.9)).toEqual({ value: 0.9, target: 0.9, met: true, atLeast: true });
    expect(atLeast(0.89, 0.9).met).toBe(false);
  });

  it("computes CPU per bind, the ratio and the per-bind counts against issue 22's targets", () => {
    const e = efficiency({
      controllerCpuSeconds: 48.6,
      apiServerCpuSeconds: 73.08,
      binds: 3600,
      conflicts409: 36,
      writesPerBind: 3,
    });
    expect(e.controllerCpuSecondsPerBind).toBe(0.0135);
    expect(e.apiServerCpuSecondsPerBind).toBe(0.0203);
    expect(e.cpuRatio).toEqual({ value: 0.665, target: 0.15, met: false });
    expect(e.controllerCpuMsPerClaim).toEqual({ value: 13.5, target: 2, met: false });
    expect(e.conflictsPerBind).toEqual({ value: 0.01, target: 0.05, met: true });
    expect(e.writesPerBind).toEqual({ value: 3, target: 2, met: false });
    expect(efficiency({ ...ZERO, controllerCpuSeconds: 1 }).cpuRatio.met).toBe(false);
  });

  it('prints an aligned table with met/MISSED', () => {
    expect(
      targetTable([
        ['cpu ratio', atMost(0.66, 0.15)],
        ['burst fraction', atLeast(0.95, 0.9)],
      ]).split('\n'),
    ).toEqual(['cpu ratio       0.66  <= 0.15  MISSED', 'burst fraction  0.95  >= 0.9   met']);
  });
});

const ZERO = { controllerCpuSeconds: 0, apiServerCpuSeconds: 0, binds: 0, conflicts409: 0, writesPerBind: 0 };

describe('warmPoolBaseline', () => {
  const steady = { latency: { addedToBound: { p50Ms: 23.7, p99Ms: 382.8 } } };
  it('reads a stored run: CPU per claim from its efficiency, or from its CPU seconds', () => {
    expect(
      warmPoolBaseline({
        date: 'd',
        steadyClaims: 3600,
        steady: { ...steady, cpu: { controller: { cpuSeconds: 55.5 } } },
      }),
    ).toEqual({ p50Ms: 23.7, p99Ms: 382.8, controllerCpuMsPerClaim: 15.417, date: 'd' });
    expect(
      warmPoolBaseline({
        steady: {
          ...steady,
          efficiency: { controllerCpuMsPerClaim: { value: 1.9 } },
          reconcilesByKind: { PodPool: { meanMs: 4.2 } },
        },
      }),
    ).toEqual({ p50Ms: 23.7, p99Ms: 382.8, controllerCpuMsPerClaim: 1.9, podPoolReconcileMeanMs: 4.2 });
  });

  it('is undefined without a stored run', () => {
    expect(warmPoolBaseline(undefined)).toBeUndefined();
    expect(warmPoolBaseline({ steady: {} })).toBeUndefined();
  });
});

describe('warmPoolScaleKey', () => {
  it('keeps the existing keys at the presets and names scaled runs by pods x namespaces', () => {
    const k = (quick: boolean, pods: number, namespaces: number) =>
      warmPoolScaleKey({ quick, pods, presetPods: quick ? 370 : 3700, namespaces });
    expect(k(false, 3700, 1)).toBe('warm-pool-scale');
    expect(k(true, 370, 1)).toBe('warm-pool-scale-quick');
    expect(k(false, 37_000, 13)).toBe('warm-pool-scale-37000x13');
    expect(k(false, 3700, 2)).toBe('warm-pool-scale-3700x2');
    expect(k(true, 3700, 13)).toBe('warm-pool-scale-3700x13-quick');
  });

  it('stores a sharded run apart: -shards<N> (one shard keeps the key)', () => {
    const k = (shards: number) =>
      warmPoolScaleKey({ quick: false, pods: 37_000, presetPods: 3700, namespaces: 13, shards });
    expect(k(1)).toBe('warm-pool-scale-37000x13');
    expect(k(2)).toBe('warm-pool-scale-37000x13-shards2');
  });

  it('stores a run under a memory limit apart: -mem<N>Mi', () => {
    expect(
      warmPoolScaleKey({
        quick: false,
        pods: 37_000,
        presetPods: 3700,
        namespaces: 13,
        memoryLimitBytes: 2 ** 29,
      }),
    ).toBe('warm-pool-scale-37000x13-mem512Mi');
    expect(memoryLimitSuffix(undefined)).toBe('');
  });
});

describe('reconcilesByKind', () => {
  it('diffs the duration histogram count and sum by kind', () => {
    const scrape = (pool: [number, number], claim: [number, number]) =>
      [
        `claimkit_reconcile_duration_seconds_bucket{kind="PodPool",le="0.1"} ${pool[0]}`,
        `claimkit_reconcile_duration_seconds_sum{kind="PodPool"} ${pool[1]}`,
        `claimkit_reconcile_duration_seconds_count{kind="PodPool"} ${pool[0]}`,
        `claimkit_reconcile_duration_seconds_sum{kind="PodClaim"} ${claim[1]}`,
        `claimkit_reconcile_duration_seconds_count{kind="PodClaim"} ${claim[0]}`,
      ].join('\n');
    expect(reconcilesByKind(scrape([10, 1], [5, 0.5]), scrape([30, 1.5], [5, 0.5]))).toEqual({
      PodPool: { n: 20, seconds: 0.5, meanMs: 25 },
    });
  });
});

describe('histogram windows (Prometheus text -> count, mean, quantiles)', () => {
  const text = (get: number[], patch: number[], sum: [number, number]) =>
    [
      '# TYPE claimkit_api_request_duration_seconds histogram',
      ...['0.1', '1', '+Inf'].map(
        (le, i) =>
          `claimkit_api_request_duration_seconds_bucket{resource="Pod",verb="get",le="${le}"} ${get[i]}`,
      ),
      `claimkit_api_request_duration_seconds_sum{resource="Pod",verb="get"} ${sum[0]}`,
      `claimkit_api_request_duration_seconds_count{resource="Pod",verb="get"} ${get[2]}`,
      ...['0.1', '1', '+Inf'].map(
        (le, i) =>
          `claimkit_api_request_duration_seconds_bucket{resource="Pod",verb="patch",le="${le}"} ${patch[i]}`,
      ),
      `claimkit_api_request_duration_seconds_sum{resource="Pod",verb="patch"} ${sum[1]}`,
      `claimkit_api_request_duration_seconds_count{resource="Pod",verb="patch"} ${patch[2]}`,
    ].join('\n');
  const M = 'claimkit_api_request_duration_seconds';
  const patches = (l: Record<string, string>) => l.verb === 'patch';

  it('takes one series by its labels and diffs two scrapes', () => {
    const before = histogramSnapshot(text([5, 5, 5], [10, 10, 10], [0.2, 0.3]), M, patches);
    const after = histogramSnapshot(text([9, 9, 9], [100, 190, 200], [0.9, 120.3]), M, patches);
    expect(after.count).toBe(200);
    const w = histogramBetween(before, after);
    expect(w.count).toBe(190);
    expect(w.buckets.get(0.1)).toBe(90);
    expect(w.buckets.get(Number.POSITIVE_INFINITY)).toBe(190);
    // 90 in (0, 0.1], 90 in (0.1, 1], 10 above 1 s.
    // p50: rank 95 is 5 of the 90 in (0.1, 1]: 0.1 + 0.9 * 5/90 = 0.15 s; p99 (rank 188.1) is above 1 s: 1 s.
    expect(histogramSummaryMs(w)).toEqual({ n: 190, meanMs: 631.6, p50Ms: 150, p99Ms: 1000 });
  });

  it('interpolates inside a bucket as histogram_quantile does, and is NaN when nothing was observed', () => {
    const h = {
      buckets: new Map([
        [0.1, 50],
        [1, 100],
        [Number.POSITIVE_INFINITY, 100],
      ]),
      sum: 1,
      count: 100,
    };
    expect(histogramQuantile(h, 0.25)).toBeCloseTo(0.05);
    expect(histogramQuantile(h, 0.75)).toBeCloseTo(0.55);
    expect(histogramQuantile(h, 1)).toBeCloseTo(1);
    const none = histogramBetween(h, h);
    expect(histogramQuantile(none, 0.5)).toBeNaN();
    expect(histogramSummaryMs(none)).toEqual({
      n: 0,
      meanMs: Number.NaN,
      p50Ms: Number.NaN,
      p99Ms: Number.NaN,
    });
  });
});
