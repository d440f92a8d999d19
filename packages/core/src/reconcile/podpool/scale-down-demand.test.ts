// Claims waiting on a pool are demand (DESIGN.md "PodPool", pool/demand.ts): lowering minIdle (by
// hand, HPA or KEDA through the scale subresource) while claims arrive deletes only the Idle pods no
// waiting claim could take, and the pool creates nothing for claims that were already waiting, with
// the pool's pod cache behind its claim cache (a bind's pod write not shown yet) or the other way
// round (its claim write not shown yet).
import { describe, expect, test } from 'vitest';
import type { PodClaim } from '../../api/types.ts';
import type { ApiModel } from '../../model/api-model.ts';
import type { CacheView } from '../../model/cache-view.ts';
import {
  boundTo,
  claimedBy,
  idle,
  inPool,
  lost,
  migratingFrom,
  onNode,
  pod,
  podClaim,
  podPool,
  ready,
  withLostPolicy,
  withMaxPods,
  withMinIdle,
  withReleaseFinalizer,
} from '../../testing/fixtures.ts';
import { putAll } from '../../testing/model-helpers.ts';
import { settleAll, type World, world } from '../../testing/world.ts';
import { reconcilePodClaim } from '../podclaim/index.ts';
import { decidePodPool } from './decide.ts';
import { gatherPodPool, reconcilePodPool } from './index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const poolPod = (name: string) => pod(name, inPool('web'), onNode('n1'), ready(), idle());

/** The pool `web` at minIdle `from`, `idle` Idle Ready pods (p0 oldest), and `waiting` claims (c0...). */
async function poolWithWaitingClaims(
  w: World<ApiModel | CacheView>,
  { from, idle: n, waiting, maxPods = 50 }: { from: number; idle: number; waiting: number; maxPods?: number },
): Promise<string[]> {
  await putAll(w.model, podPool('web', withMinIdle(from), withMaxPods(maxPods)));
  for (let i = 0; i < n; i++) await putAll(w.model, poolPod(`p${i}`));
  const claims = Array.from({ length: waiting }, (_, i) => `c${i}`);
  for (const c of claims) await putAll(w.model, podClaim(c, withReleaseFinalizer()));
  return claims;
}

/** What the pool's decision from the cache, as it is now, would create and delete. */
async function decision(
  w: World<ApiModel | CacheView>,
  live = false,
): Promise<{ creates: number; deletes: string[] }> {
  const s = await gatherPodPool(w.deps, key('web'), { live });
  const d = decidePodPool(s!);
  return {
    creates: d.writes.filter((x) => x.op === 'create').length,
    deletes: d.writes.flatMap((x) => (x.op === 'delete' ? [x.key.name] : [])),
  };
}

const lowerMinIdle = (model: ApiModel, minIdle: number) =>
  model.updateScale('PodPool', key('web'), minIdle, {});

/** Pod creates and deletes since write `from`, as the model recorded them. */
const podWrites = (model: ApiModel, from: number) => {
  const ws = model.writes.slice(from).filter((x) => x.kind === 'Pod');
  return {
    creates: ws.filter((x) => x.verb === 'create').length,
    deletes: ws.filter((x) => x.verb === 'delete').length,
  };
};

const idleLeft = (model: ApiModel) =>
  model
    .listNow('Pod')
    .filter((p) => !p.metadata.deletionTimestamp && p.metadata.labels?.['claimkit.dev/state'] === 'Idle')
    .length;

describe('scale-down keeps the Idle pods waiting claims can take', () => {
  test('minIdle lowered under waiting claims: deletes idle - waiting - minIdle, then creates nothing', async () => {
    const w = world();
    const claims = await poolWithWaitingClaims(w, { from: 10, idle: 10, waiting: 3 });
    await lowerMinIdle(w.model, 2);
    expect(await decision(w)).toEqual({ creates: 0, deletes: ['p9', 'p8', 'p7', 'p6', 'p5'] });
    const from = w.model.writes.length;
    await reconcilePodPool(w.deps, key('web'));
    await settleAll(w, reconcilePodClaim, 'PodClaim', claims);
    await reconcilePodPool(w.deps, key('web'));
    expect(podWrites(w.model, from)).toEqual({ creates: 0, deletes: 5 });
    expect(claims.map((c) => w.get('PodClaim', c).status?.podName)).toEqual([
      expect.any(String),
      expect.any(String),
      expect.any(String),
    ]);
    expect(idleLeft(w.model)).toBe(2);
  });

  test("the pod cache behind the claim cache: a claim's pod that still looks Idle is not scaled down or counted", async () => {
    // The pool's pod informer has not shown the binds' pod writes yet; its claim informer has shown
    // the claims' spec writes (the bench replay: 5-9 pods deleted, then created for waiting claims).
    const w = world({ lag: 0 });
    const claims = await poolWithWaitingClaims(w, { from: 10, idle: 10, waiting: 6 });
    await w.cache.list('Pod');
    w.cache.kindLag = { Pod: 1000 };
    for (const c of claims.slice(0, 3)) await reconcilePodClaim({ ...w.deps, cache: w.model }, key(c));
    const taken = claims.slice(0, 3).map((c) => w.get('PodClaim', c).status!.podName!);
    expect(taken).toHaveLength(3);
    await lowerMinIdle(w.model, 2);
    // Truly 7 Idle, 3 claims waiting, minIdle 2: 2 to delete, none of them taken.
    const d = await decision(w);
    expect(d.creates).toBe(0);
    expect(d.deletes).toHaveLength(2);
    expect(d.deletes.filter((p) => taken.includes(p))).toEqual([]);
    // The pool acts on that view; then its pod informer catches up and the claims bind.
    const from = w.model.writes.length;
    await reconcilePodPool(w.deps, key('web'));
    w.cache.kindLag = {};
    await settleAll(w, reconcilePodClaim, 'PodClaim', claims);
    await reconcilePodPool(w.deps, key('web'));
    expect(podWrites(w.model, from)).toEqual({ creates: 0, deletes: 2 });
    expect(claims.every((c) => w.get('PodClaim', c).status?.podName)).toBe(true);
    expect(idleLeft(w.model)).toBe(2);
  });

  test('the claim cache behind the pod cache: a claim its pod is labelled for is not waiting', async () => {
    // The bind's pod write is shown (Bound, claimed-by c0), its claim write is not: c0 has its pod.
    const w = world();
    await putAll(w.model, podPool('web', withMinIdle(2), withMaxPods(50)), poolPod('p0'), poolPod('p1'));
    const [c0] = (await putAll(w.model, podClaim('c0', withReleaseFinalizer()))) as PodClaim[];
    await putAll(w.model, pod('p2', inPool('web'), onNode('n1'), ready(), claimedBy(c0!)));
    expect(await decision(w)).toEqual({ creates: 0, deletes: [] });
    // A pod labelled with its name but another UID (a previous claim's, residue) leaves it waiting.
    await w.model.delete('Pod', key('p2'));
    await putAll(w.model, pod('p3', inPool('web'), onNode('n1'), ready(), claimedBy('c0')));
    expect((await decision(w, true)).creates).toBe(1);
  });

  test('a claim that lost its migration target, its source still labelled for it, is waiting', async () => {
    // Its source is Bound and labelled for it, but it is the claim's sourcePod, not a bind in flight:
    // the claim drains and releases it, then needs a new pod.
    const w = world();
    await putAll(w.model, podPool('web', withMinIdle(0), withMaxPods(50)));
    const [c] = (await putAll(w.model, podClaim('c', migratingFrom('p0'), lost()))) as PodClaim[];
    await putAll(w.model, pod('p0', inPool('web'), onNode('n1'), ready(), claimedBy(c!)));
    expect(await decision(w)).toEqual({ creates: 1, deletes: [] });
  });

  test('waiting claims beyond the Idle pods still make the pool create', async () => {
    const w = world();
    await poolWithWaitingClaims(w, { from: 4, idle: 2, waiting: 5 });
    await lowerMinIdle(w.model, 1);
    expect(await decision(w)).toEqual({ creates: 4, deletes: [] });
  });

  test('a claim waiting on a pool at maxPods: nothing created, nothing deleted', async () => {
    const w = world();
    await putAll(w.model, podPool('web', withMinIdle(2), withMaxPods(3)));
    for (const i of [0, 1, 2]) {
      const [c] = (await putAll(w.model, podClaim(`b${i}`, boundTo(`p${i}`, 'n1')))) as PodClaim[];
      await putAll(w.model, pod(`p${i}`, inPool('web'), onNode('n1'), ready(), claimedBy(c!)));
    }
    await putAll(w.model, podClaim('c0', withReleaseFinalizer()));
    await lowerMinIdle(w.model, 0);
    expect(await decision(w)).toEqual({ creates: 0, deletes: [] });
  });

  test('a lostPolicy Fail claim that lost its pod is not demand: it never binds again by itself', async () => {
    const w = world();
    await putAll(
      w.model,
      podPool('web', withMinIdle(1), withMaxPods(50)),
      poolPod('p0'),
      podClaim('failed', withLostPolicy('Fail'), lost()),
    );
    expect(await decision(w)).toEqual({ creates: 0, deletes: [] });
  });
});
