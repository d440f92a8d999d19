// Pool expectations observed by name: a reconcile looks up only the pods its expectations wait on
// (pendingNames), so the gate costs what the pool wrote, not what the pool holds.
import { describe, expect, test } from 'vitest';
import type { Pod } from '../api/types.ts';
import { deleting, inPool, pod, T0_MS, withUid } from '../testing/fixtures.ts';
import { EXPECTATIONS_TTL_MS, PoolExpectations } from './expectations.ts';

const POOL_UID = 'pool-uid';
const shown = (...pods: Pod[]) => new Map(pods.map((p) => [p.metadata.name, p]));

describe('PoolExpectations observed by name', () => {
  test('a created pod is pending until the cache shows its name', () => {
    const x = new PoolExpectations();
    x.created(POOL_UID, 'web-a', T0_MS);
    expect(x.pendingNames(POOL_UID)).toEqual(['web-a']);
    expect(x.observe(POOL_UID, shown(), T0_MS)).toMatchObject({ creates: 1, deletes: 0 });
    expect(x.observe(POOL_UID, shown(pod('web-a', inPool('web'))), T0_MS)).toEqual({
      creates: 0,
      deletes: 0,
    });
    expect(x.pendingNames(POOL_UID)).toEqual([]);
  });

  test('a deleted pod is pending while the cache shows it live under the same UID', () => {
    const x = new PoolExpectations();
    x.deleting(POOL_UID, 'uid-1', 'web-a', T0_MS);
    expect(x.pendingNames(POOL_UID)).toEqual(['web-a']);
    const live = pod('web-a', inPool('web'), withUid('uid-1'));
    expect(x.observe(POOL_UID, shown(live), T0_MS)).toMatchObject({
      creates: 0,
      deletes: 1,
      expiresAt: T0_MS + EXPECTATIONS_TTL_MS,
    });
    // Terminating counts as observed: the pool may act again.
    expect(
      x.observe(POOL_UID, shown(pod('web-a', inPool('web'), withUid('uid-1'), deleting())), T0_MS),
    ).toEqual({
      creates: 0,
      deletes: 0,
    });
  });

  test('a pod re-created under the same name, or gone, observes the delete', () => {
    const x = new PoolExpectations();
    x.deleting(POOL_UID, 'uid-1', 'web-a', T0_MS);
    x.deleting(POOL_UID, 'uid-2', 'web-b', T0_MS);
    const recreated = pod('web-a', inPool('web'), withUid('uid-9'));
    expect(x.observe(POOL_UID, shown(recreated), T0_MS)).toEqual({ creates: 0, deletes: 0 });
  });

  test('an unobserved expectation expires', () => {
    const x = new PoolExpectations();
    x.created(POOL_UID, 'web-a', T0_MS);
    x.createUnknown(POOL_UID, T0_MS);
    expect(x.observe(POOL_UID, shown(), T0_MS + 1)).toMatchObject({ creates: 2 });
    expect(x.observe(POOL_UID, shown(), T0_MS + EXPECTATIONS_TTL_MS)).toEqual({ creates: 0, deletes: 0 });
  });
});
