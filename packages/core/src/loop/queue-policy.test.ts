// The result -> queue policy, as data, and performing it on a queue.
import { describe, expect, test } from 'vitest';
import { FakeTimers } from '../testing/fake-timers.ts';
import { OWN_WRITES_TTL_MS } from './own-writes.ts';
import { applyQueueAction, queuePolicy } from './queue-policy.ts';
import { WorkQueue } from './work-queue.ts';

describe('queuePolicy', () => {
  test('each outcome to its action', () => {
    expect(queuePolicy({ reconciled: { requeueAfterMs: 0 } })).toEqual({
      next: 'backoff',
      result: 'requeue',
    });
    expect(queuePolicy({ reconciled: {} })).toEqual({ next: 'forget', result: 'success' });
    expect(queuePolicy({ reconciled: { requeueAfterMs: 1500 } })).toEqual({
      next: 'forget-then-add-after',
      ms: 1500,
      result: 'success',
    });
    expect(queuePolicy({ failed: new Error('boom') })).toEqual({
      next: 'retry-rate-limited',
      result: 'error',
    });
    expect(queuePolicy({ cacheBehind: { ttlMs: OWN_WRITES_TTL_MS } })).toEqual({
      next: 'forget-then-add-after',
      ms: OWN_WRITES_TTL_MS,
      result: 'cache_behind',
    });
  });
});

describe('applyQueueAction on the WorkQueue', () => {
  const mk = () => {
    const timers = new FakeTimers();
    return { timers, q: new WorkQueue({ timers, baseDelayMs: 10, burst: 1000 }) };
  };

  test('"again at once": 0 the first time, then the per-key backoff; a success forgets it', async () => {
    const { q } = mk();
    const backoff = queuePolicy({ reconciled: { requeueAfterMs: 0 } });
    expect(applyQueueAction(q, 'a', backoff)).toBe(0);
    expect(q.len()).toBe(1);
    expect(applyQueueAction(q, 'a', backoff)).toBe(10);
    expect(applyQueueAction(q, 'a', backoff)).toBe(20);
    expect(q.numRequeues('a')).toBe(3);
    expect(applyQueueAction(q, 'a', queuePolicy({ reconciled: {} }))).toBeUndefined();
    expect(q.numRequeues('a')).toBe(0);
  });

  test('"again in n ms" forgets the failures and waits n ms', () => {
    const { q, timers } = mk();
    q.when('a');
    expect(applyQueueAction(q, 'a', queuePolicy({ reconciled: { requeueAfterMs: 300 } }))).toBe(300);
    expect(q.numRequeues('a')).toBe(0);
    timers.advance(299);
    expect(q.len()).toBe(0);
    timers.advance(1);
    expect(q.len()).toBe(1);
  });

  test('a failure retries after the exponential delay', () => {
    const { q } = mk();
    const failed = queuePolicy({ failed: new Error('x') });
    expect([1, 2, 3].map(() => applyQueueAction(q, 'a', failed))).toEqual([10, 20, 40]);
    expect(q.delayed()).toBe(1);
  });
});
