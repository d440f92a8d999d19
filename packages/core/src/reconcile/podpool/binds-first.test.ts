// Binds first (pool/binds-first.ts): while a fresh backlog of claims waits on a pool whose Idle pods
// can serve them all, the pool creates nothing and comes back; it refills once the claims are bound,
// or once the oldest has waited 2 s, and a trickle of claims or a backlog the Idle pods cannot serve
// never holds a create. Through the pool reconciler over core's in-memory API model.
import { describe, expect, test } from 'vitest';
import { type BindsFirstInput, bindsFirstWaitMs } from '../../pool/binds-first.ts';
import {
  idle,
  inPool,
  onNode,
  pod,
  podClaim,
  podPool,
  ready,
  withMaxPods,
  withMinIdle,
} from '../../testing/fixtures.ts';
import { put, putAll } from '../../testing/model-helpers.ts';
import { settleAll, world } from '../../testing/world.ts';
import { reconcilePodClaim } from '../podclaim/index.ts';
import { reconcilePodPool } from './index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

/** The pool `web` at minIdle `minIdle` with `idlePods` Idle Ready pods, then `waiting` claims on it. */
async function poolWithBacklog(minIdle: number, idlePods: number, waiting: number) {
  const w = world();
  await putAll(w.model, podPool('web', withMinIdle(minIdle), withMaxPods(100)));
  for (let i = 0; i < idlePods; i++)
    await putAll(w.model, pod(`p${i}`, inPool('web'), onNode('n1'), ready(), idle()));
  const claims = Array.from({ length: waiting }, (_, i) => `c${i}`);
  // Created at once (putAll spaces objects a second apart): a burst.
  for (const c of claims) await put(w.model, podClaim(c));
  return { w, claims };
}

const podCreates = (w: ReturnType<typeof world>, from: number) =>
  w.model.writes.slice(from).filter((x) => x.kind === 'Pod' && x.verb === 'create').length;

describe('binds first: a pool holds its creates for a fresh backlog its Idle pods can serve', () => {
  test('10 waiting claims, 12 Idle pods: no create, back within 2 s; the claims bind; then the pool refills', async () => {
    const { w, claims } = await poolWithBacklog(12, 12, 10);
    let from = w.model.writes.length;
    const held = await reconcilePodPool(w.deps, key('web'));
    expect(podCreates(w, from)).toBe(0);
    expect(held.requeueAfterMs).toBeGreaterThan(0);
    expect(held.requeueAfterMs).toBeLessThanOrEqual(2000);
    await settleAll(w, reconcilePodClaim, 'PodClaim', claims);
    expect(claims.every((c) => w.get('PodClaim', c).spec.podName)).toBe(true);
    from = w.model.writes.length;
    await reconcilePodPool(w.deps, key('web'));
    // 2 Idle left of minIdle 12, nothing waiting: 10 created at once.
    expect(podCreates(w, from)).toBe(10);
  });

  test('the backlog still waiting after 2 s: the pool creates for it and minIdle', async () => {
    const { w } = await poolWithBacklog(12, 12, 10);
    await reconcilePodPool(w.deps, key('web'));
    w.clock.advance(2000);
    const from = w.model.writes.length;
    await reconcilePodPool(w.deps, key('web'));
    // minIdle 12 + 10 waiting = 22 Idle wanted, 12 there.
    expect(podCreates(w, from)).toBe(10);
  });

  test.each([
    ['a trickle: 7 waiting claims', 12, 12, 7, 7],
    ['more waiting claims than Idle pods: 10 waiting, 9 Idle', 9, 9, 10, 10],
  ])('%s: the pool creates at once', async (_what, minIdle, idlePods, waiting, creates) => {
    const { w } = await poolWithBacklog(minIdle, idlePods, waiting);
    const from = w.model.writes.length;
    await reconcilePodPool(w.deps, key('web'));
    expect(podCreates(w, from)).toBe(creates);
  });
});

describe('bindsFirstWaitMs', () => {
  const at = (x: Partial<BindsFirstInput>) =>
    bindsFirstWaitMs({ waiting: 10, idle: 12, oldestWaitingAt: 100_000, now: 100_500, ...x });
  test('holds until the oldest waiting claim is 2 s old, for 8 or more claims the Idle pods cover', () => {
    expect(at({})).toBe(1500);
    expect(at({ now: 101_999 })).toBe(1);
    expect(at({ now: 102_000 })).toBe(0);
    expect(at({ waiting: 8, idle: 8 })).toBe(1500);
    expect(at({ waiting: 7 })).toBe(0);
    expect(at({ idle: 9 })).toBe(0);
    expect(at({ oldestWaitingAt: undefined })).toBe(0);
  });
  test('a claim stamped ahead of this clock (skew) holds 2 s at most', () => {
    expect(at({ oldestWaitingAt: 160_000 })).toBe(2000);
  });
});
