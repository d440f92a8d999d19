// Pool scaling without a live list: expectations hold creates and deletes the cache does not show
// yet, creates go in slow-start batches, terminating pods count against maxPods, unschedulable pods
// are held, stranded Idle pods are replaced, and claims never bind a pod on a node that cannot serve.
import { describe, expect, test } from 'vitest';
import { LABEL_POOL } from '../api/constants.ts';
import { intercept } from '../api/interceptor.ts';
import { isDeleting } from '../api/pod-predicates.ts';
import type { Client } from '../api/ports.ts';
import type { Pod } from '../api/types.ts';
import type { ApiModel } from '../model/api-model.ts';
import { CacheView } from '../model/cache-view.ts';
import { reconcilePodClaim } from '../reconcile/podclaim/index.ts';
import { applyPoolDecision } from '../reconcile/podpool/apply.ts';
import { decidePodPool, reconcilePodPool } from '../reconcile/podpool/index.ts';
import {
  cordoned,
  forPool,
  idle,
  inPool,
  node,
  nodeNotReady,
  onNode,
  pod,
  podClaim,
  podPool,
  ready,
  T0_MS,
  unschedulable,
  withMaxPods,
  withMinIdle,
  withReleaseFinalizer,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world as harness } from '../testing/world.ts';
import { EXPECTATIONS_TTL_MS, PoolExpectations } from './expectations.ts';
import { decideScaling } from './scaling.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('web'), idle(), ...mods);

/** Reconcilers read a CacheView (lag 0 until a test sets it) and keep pool expectations. */
const world = () => harness({ lag: 0, expectations: true });

const poolPods = (model: ApiModel): Pod[] =>
  model.listNow('Pod').filter((p) => p.metadata.labels?.[LABEL_POOL] === 'web');

describe('expectations', () => {
  test('a lagging cache never makes the pool create twice', async () => {
    const { model, cache, deps } = world();
    await put(model, podPool('web', withMinIdle(3), withMaxPods(10)));
    cache.lag = 0;
    await reconcilePodPool(deps, key('web'));
    expect(poolPods(model)).toHaveLength(3);
    // The cache now lags every event since: it still shows no pods.
    cache.lag = 1000;
    for (let i = 0; i < 5; i++) await reconcilePodPool(deps, key('web'));
    expect(poolPods(model)).toHaveLength(3);
    // Without expectations the same lagging cache over-creates (what the gate is for).
    const forgetful = { ...deps, expectations: new PoolExpectations() };
    await reconcilePodPool(forgetful, key('web'));
    expect(poolPods(model).length).toBeGreaterThan(3);
  });

  test('the pool decides again once its cache shows what it created', async () => {
    const { model, cache, deps, expectations } = world();
    const pool = await put(model, podPool('web', withMinIdle(2), withMaxPods(10)));
    await cache.list('PodPool');
    cache.lag = 1000;
    await reconcilePodPool(deps, key('web'));
    expect(expectations.observe(pool.metadata.uid!, new Map(), T0_MS).creates).toBe(2);
    cache.lag = 0;
    // A person deletes one of the pods: the next reconcile sees the cache, and replaces it.
    const [first] = poolPods(model);
    await model.delete('Pod', key(first!.metadata.name));
    await reconcilePodPool(deps, key('web'));
    expect(poolPods(model)).toHaveLength(2);
  });

  test('an unobserved expectation expires after the TTL and the pool decides again', async () => {
    const { model, clock, deps, expectations } = world();
    const pool = await put(model, podPool('web', withMinIdle(1), withMaxPods(5)));
    // A create whose outcome is unknown: it may or may not have landed.
    expectations.createUnknown(pool.metadata.uid!, clock.now());
    const r = await reconcilePodPool(deps, key('web'));
    expect(poolPods(model)).toHaveLength(0);
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    expect(r.requeueAfterMs).toBeLessThanOrEqual(EXPECTATIONS_TTL_MS);
    clock.advance(EXPECTATIONS_TTL_MS);
    await reconcilePodPool(deps, key('web'));
    expect(poolPods(model)).toHaveLength(1);
  });

  test('a timed-out create that landed is held by the expectation, not created again', async () => {
    const { model, deps } = world();
    await put(model, podPool('web', withMinIdle(1), withMaxPods(5)));
    model.faults.inject({
      verbs: ['create'],
      kinds: ['Pod'],
      reason: 'Timeout',
      times: 1,
      appliedBeforeError: true,
    });
    await reconcilePodPool(deps, key('web')).catch(() => undefined);
    expect(poolPods(model)).toHaveLength(1);
    // The cache does show the pod, but the pool cannot tell it is the one it timed out on: it waits.
    await reconcilePodPool({ ...deps, cache: new CacheView(model, 1000) }, key('web'));
    expect(poolPods(model)).toHaveLength(1);
  });

  test('deletes wait for the cache too: a lagging cache never deletes more than the excess', async () => {
    const { model, cache, deps } = world();
    await put(model, podPool('web', withMinIdle(1), withMaxPods(10)));
    for (const n of ['a', 'b', 'c', 'd']) await put(model, poolPod(n, ready(), onNode('n1')));
    await reconcilePodPool(deps, key('web'));
    expect(poolPods(model).filter((p) => !isDeleting(p))).toHaveLength(1);
    cache.lag = 1000;
    await put(model, podClaim('c1', forPool('web'), withReleaseFinalizer()));
    await reconcilePodPool(deps, key('web'));
    expect(poolPods(model).filter((p) => !isDeleting(p))).toHaveLength(1);
  });
});

describe('API cost', () => {
  test('scaling up and down reads only the cache: no live list or get per reconcile', async () => {
    const { model, cache, deps } = world();
    const live: string[] = [];
    const client = intercept(model as Client, {
      request: (call, next) => {
        if (call.verb === 'get' || call.verb === 'list') live.push(`${call.verb} ${call.kind}`);
        return next();
      },
    });
    await put(model, podPool('web', withMinIdle(3), withMaxPods(10)));
    await reconcilePodPool({ ...deps, client }, key('web'));
    await cache.list('Pod');
    await model.patch('PodPool', key('web'), { spec: { minIdle: 1 } });
    await reconcilePodPool({ ...deps, client }, key('web'));
    expect(poolPods(model).filter((p) => !isDeleting(p))).toHaveLength(1);
    expect(live).toEqual([]);
  });
});

describe('slow start', () => {
  test('creates go in batches of 1, 2, 4, 8, ...', async () => {
    const { model, deps, expectations } = world();
    const pool = await put(model, podPool('web', withMinIdle(20), withMaxPods(50)));
    const snap = {
      pool,
      pods: [],
      claims: [],
      missingClaims: new Set<string>(),
      live: false,
      now: T0_MS,
    };
    const batches: number[] = [];
    const res = await applyPoolDecision(
      { client: deps.client, expectations, poolUid: pool.metadata.uid!, now: deps.now, batches },
      decidePodPool(snap),
    );
    expect(batches).toEqual([1, 2, 4, 8, 5]);
    expect(res.failed).toBeUndefined();
    expect(poolPods(model)).toHaveLength(20);
  });

  test('a batch with an error ends the creates: a quota refusal costs a few requests, not 20', async () => {
    const { model, deps, expectations } = world();
    const pool = await put(model, podPool('web', withMinIdle(20), withMaxPods(50)));
    model.faults.inject({ verbs: ['create'], kinds: ['Pod'], reason: 'Forbidden' });
    const snap = { pool, pods: [], claims: [], missingClaims: new Set<string>(), live: false, now: T0_MS };
    const batches: number[] = [];
    const res = await applyPoolDecision(
      { client: deps.client, expectations, poolUid: pool.metadata.uid!, now: deps.now, batches },
      decidePodPool(snap),
    );
    expect(batches).toEqual([1]);
    expect(res.failed?.error.reason).toBe('Forbidden');
    // A refused create is not expected: nothing holds the pool's next decision.
    expect(expectations.observe(pool.metadata.uid!, new Map(), T0_MS)).toMatchObject({
      creates: 0,
      deletes: 0,
    });
  });
});

describe('maxPods, terminating and unschedulable pods', () => {
  const base = (pods: Pod[], pendingClaims = 0) => ({
    pool: podPool('web', withMinIdle(3), withMaxPods(4)),
    pods,
    pendingClaims,
    expectations: { creates: 0, deletes: 0 },
    unservable: new Set<string>(),
    now: T0_MS,
    newPod: () => pod('new', inPool('web'), idle()),
  });
  const terminating = (name: string) =>
    poolPod(name, ready(), (p) => {
      p.metadata.deletionTimestamp = new Date(T0_MS).toISOString();
    });

  test('terminating pods count against maxPods', () => {
    const d = decideScaling(base([terminating('t1'), terminating('t2'), terminating('t3')]));
    expect(d.writes.filter((w) => w.op === 'create')).toHaveLength(1);
  });

  test('terminating pods do not shrink the Idle target (no scale-down churn while they go)', () => {
    const pods = [terminating('t1'), ...['a', 'b', 'c'].map((n) => poolPod(n, ready(), onNode('n1')))];
    expect(decideScaling(base(pods)).writes).toEqual([]);
  });

  test('unschedulable Idle pods are held: they count toward the target, none are added for them', () => {
    const pods = ['a', 'b', 'c'].map((n) => poolPod(n, unschedulable()));
    const d = decideScaling(base(pods, 0));
    expect(d.writes).toEqual([]);
    expect(d.unschedulable).toBe(3);
  });

  test('expectations pending: no creates and no deletes, a requeue when the oldest expires', () => {
    const d = decideScaling({
      ...base([]),
      expectations: { creates: 1, deletes: 0, expiresAt: T0_MS + 5000 },
    });
    expect(d.writes).toEqual([]);
    expect(d.requeueAfterMs).toBe(5000);
    const over = ['a', 'b', 'c', 'd', 'e'].map((n) => poolPod(n, ready()));
    expect(
      decideScaling({ ...base(over), expectations: { creates: 0, deletes: 2, expiresAt: T0_MS + 1 } }).writes,
    ).toEqual([]);
  });

  test('a pool with an unschedulable template creates the target once and holds', async () => {
    const { model, deps } = world();
    await put(model, podPool('web', withMinIdle(3), withMaxPods(10)));
    for (let i = 0; i < 5; i++) {
      await reconcilePodPool(deps, key('web'));
      // The scheduler finds no node for any of them.
      for (const p of poolPods(model))
        if (!p.status?.conditions?.length)
          await model.patchStatus('Pod', key(p.metadata.name), {
            status: {
              phase: 'Pending',
              conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
            },
          });
    }
    expect(poolPods(model)).toHaveLength(3);
    const ready = model.getNow('PodPool', key('web')).status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'PodsUnschedulable' });
  });
});

describe('pods that can serve', () => {
  test('claims never bind a pod on a cordoned or NotReady node; an unknown node counts as serving', async () => {
    const { model, deps } = world();
    await put(model, podPool('web', withMinIdle(0), withMaxPods(10)));
    await put(model, node('good'));
    await put(model, node('cordoned', cordoned()));
    await put(model, node('dead', nodeNotReady()));
    await put(model, poolPod('on-cordoned', ready(), onNode('cordoned')));
    await put(model, poolPod('on-dead', ready(), onNode('dead')));
    for (const n of ['c1', 'c2', 'c3']) await put(model, podClaim(n, forPool('web'), withReleaseFinalizer()));
    for (let i = 0; i < 10; i++) for (const n of ['c1', 'c2', 'c3']) await reconcilePodClaim(deps, key(n));
    for (const n of ['c1', 'c2', 'c3'])
      expect(model.getNow('PodClaim', key(n)).status?.podName ?? '').toBe('');
    await put(model, poolPod('on-good', ready(), onNode('good')));
    await put(model, poolPod('on-unknown', ready(), onNode('not-in-cache')));
    for (let i = 0; i < 10; i++) for (const n of ['c1', 'c2', 'c3']) await reconcilePodClaim(deps, key(n));
    const bound = ['c1', 'c2', 'c3']
      .map((n) => model.getNow('PodClaim', key(n)).status?.podName)
      .filter(Boolean);
    expect(bound.sort()).toEqual(['on-good', 'on-unknown']);
  });

  test('Idle pods on an unservable node are replaced: the new pod first, then the stranded one goes', async () => {
    const { model, deps } = world();
    await put(model, podPool('web', withMinIdle(2), withMaxPods(10)));
    await put(model, node('n1'));
    await put(model, node('n2'));
    await put(model, poolPod('a', ready(), onNode('n1')));
    await put(model, poolPod('b', ready(), onNode('n2')));
    await model.patch('Node', { namespace: '', name: 'n1' }, { spec: { unschedulable: true } });
    await reconcilePodPool(deps, key('web'));
    // First pass: one replacement is created, the stranded pod stays.
    expect(poolPods(model)).toHaveLength(3);
    expect(model.tryGetNow('Pod', key('a'))?.metadata.deletionTimestamp).toBeUndefined();
    await reconcilePodPool(deps, key('web'));
    // Second pass (the cache shows the replacement): the stranded pod is deleted.
    expect(model.tryGetNow('Pod', key('a'))?.metadata.deletionTimestamp).toBeDefined();
    model.completePodDeletions();
    await reconcilePodPool(deps, key('web'));
    expect(poolPods(model)).toHaveLength(2);
  });

  test('at maxPods a stranded pod makes room for its replacement', async () => {
    const { model, deps } = world();
    await put(model, podPool('web', withMinIdle(1), withMaxPods(1)));
    await put(model, node('n1', nodeNotReady()));
    await put(model, poolPod('a', ready(), onNode('n1')));
    await reconcilePodPool(deps, key('web'));
    expect(model.tryGetNow('Pod', key('a'))?.metadata.deletionTimestamp).toBeDefined();
    // While it terminates it still counts against maxPods: no replacement yet.
    await reconcilePodPool(deps, key('web'));
    expect(poolPods(model)).toHaveLength(1);
    model.completePodDeletions();
    await reconcilePodPool(deps, key('web'));
    expect(poolPods(model).map((p) => p.metadata.name)).not.toContain('a');
    expect(poolPods(model)).toHaveLength(1);
  });
});
