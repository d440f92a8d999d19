import { describe, expect, test } from 'vitest';
import { WaitingQueue } from './waiting-queue.ts';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

describe('WaitingQueue: a pool serves its waiting claims oldest first', () => {
  test('by creationTimestamp, then by when the claim was first seen (a timestamp has whole seconds)', () => {
    const q = new WaitingQueue();
    q.add('late', 'u-late', at(5), 0);
    q.add('b', 'u-b', at(1), 2);
    q.add('a', 'u-a', at(1), 1);
    q.add('first', 'u-first', at(0), 3);
    expect(q.names()).toEqual(['first', 'a', 'b', 'late']);
    expect(q.names(2)).toEqual(['first', 'a']);
    q.remove('a');
    expect(q.names()).toEqual(['first', 'b', 'late']);
    expect(q.size).toBe(3);
    // Added again (an update of the claim): one entry, in its place.
    q.add('b', 'u-b', at(1), 2);
    expect(q.names()).toEqual(['first', 'b', 'late']);
  });

  test('ahead: the older claims without a bind in flight; undefined for a claim not waiting here', () => {
    const q = new WaitingQueue();
    for (const [i, n] of ['c0', 'c1', 'c2', 'c3'].entries()) q.add(n, `u-${n}`, at(i), i);
    expect(q.ahead('c3', new Set())).toBe(3);
    // c0 and c1 are binding: c3 is next but one.
    expect(q.ahead('c3', new Set(['u-c0', 'u-c1']))).toBe(1);
    // A claim's own bind and newer claims' binds do not move it; unknown UIDs neither.
    expect(q.ahead('c1', new Set(['u-c1', 'u-c3', 'u-gone']))).toBe(1);
    expect(q.ahead('other', new Set())).toBeUndefined();
  });
});

describe('WaitingQueue: which claims a freed pod wakes', () => {
  test('the parked ones (told to wait) among the oldest `limit`', () => {
    const q = new WaitingQueue();
    q.add('new0', 'u0', at(0), 0); // not reconciled yet: queued from its creation
    q.add('p1', 'u1', at(1), 1, true);
    q.add('p2', 'u2', at(2), 2, true);
    q.add('p3', 'u3', at(3), 3, true);
    expect(q.parkedWithin(1)).toEqual([]);
    expect(q.parkedWithin(3)).toEqual(['p1', 'p2']);
    q.remove('p1');
    expect(q.parkedWithin(3)).toEqual(['p2', 'p3']);
    // Parked again after an update that says it waits: one entry.
    q.add('p2', 'u2', at(2), 2, true);
    expect(q.parkedWithin(10)).toEqual(['p2', 'p3']);
  });
});
