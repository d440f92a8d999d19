import { describe, expect, test } from 'vitest';
import { REQUEUE_BACKOFF_CAP_MS, RetryLimiter } from './retry-limiter.ts';

describe('RetryLimiter', () => {
  test('a failure: per-key exponential, capped, the token bucket when it is empty', () => {
    let now = 0;
    const l = new RetryLimiter({ now: () => now, baseDelayMs: 10, maxDelayMs: 100, qps: 10, burst: 3 });
    expect([l.when('a'), l.when('a'), l.when('a')]).toEqual([10, 20, 40]);
    expect(l.when('b')).toBe(100); // bucket empty: a token per 100 ms
    now += 1000;
    expect(l.when('a')).toBe(80);
    expect(l.when('a')).toBe(100);
    expect(l.numRequeues('a')).toBe(5);
  });

  test('"again at once": 0, then base·2ⁿ up to the low cap, no bucket; forget starts over', () => {
    const l = new RetryLimiter({ now: () => 0, baseDelayMs: 100, burst: 0 });
    expect([1, 2, 3, 4, 5, 6].map(() => l.backoff('k'))).toEqual([
      0,
      100,
      200,
      400,
      800,
      REQUEUE_BACKOFF_CAP_MS,
    ]);
    l.forget('k');
    expect(l.backoff('k')).toBe(0);
    expect(l.numRequeues('other')).toBe(0);
  });
});
