import { describe, expect, it } from 'vitest';
import {
  arrivalSchedule,
  classifyRequests,
  diffCounts,
  latencySummary,
  mergeResults,
  parseCounter,
  percentile,
  requestCounts,
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
