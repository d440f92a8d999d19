// Unit tests for the pool rules on the in-memory API model: CAS bind, resumable migration steps,
// release per policy, pool scaling and the claim-set scale-out guard.
import { describe, expect, test } from 'vitest';
import { ANNOTATION_MIGRATE, LABEL_CLAIMED_BY, LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import { isApiError } from '../api/errors.ts';
import type { Client, ListOptions } from '../api/ports.ts';
import type { Kind, PodClaim } from '../api/types.ts';
import { checkConvergence } from '../invariants/check.ts';
import type { ApiModel } from '../model/api-model.ts';
import { CacheView } from '../model/cache-view.ts';
import { bindCandidates } from '../pool/bind-candidates.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import {
  boundTo,
  claimedBy,
  forPool,
  idle,
  inPool,
  inSet,
  onNode,
  pod,
  podClaim,
  podClaimSet,
  podPool,
  ready,
  requestMigration,
  T0_MS,
  withDrainSeconds,
  withMaxPods,
  withMinIdle,
  withReleaseFinalizer,
  withReleasePolicy,
  withReplicas,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { untilQuiet, type World, world } from '../testing/world.ts';
import { applyDecision } from './apply.ts';
import { decidePodClaim, gatherPodClaim, reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodClaimSet } from './podclaimset/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('web'), onNode('n1'), ready(), ...mods);

const run = (deps: World['deps'], name: string) => untilQuiet(deps, reconcilePodClaim, name);

const converged = (model: ApiModel, now: number) =>
  checkConvergence({ captures: [], pods: model.listNow('Pod'), claims: model.listNow('PodClaim') }, now);

describe('binding', () => {
  test('candidates: Idle, same pool, unreferenced, Ready, not deleting; oldest first, then name', () => {
    const at = (s: number) => (p: { metadata: { creationTimestamp?: string } }) => {
      p.metadata.creationTimestamp = new Date(T0_MS + s * 1000).toISOString();
    };
    const pods = [
      poolPod('b', idle(), at(5)),
      poolPod('a', idle(), at(5)),
      poolPod('old', idle(), at(1)),
      poolPod('other-pool', idle(), at(0), (p) => {
        p.metadata.labels![LABEL_POOL] = 'x';
      }),
      poolPod('bound', claimedBy('z'), at(0)),
      poolPod('referenced', idle(), at(0)),
      pod('not-ready', inPool('web'), idle(), at(0)),
      poolPod('deleting', idle(), at(0), (p) => {
        p.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
      }),
    ];
    const index = new ClaimIndex([podClaim('r', boundTo('referenced'))]);
    expect(bindCandidates('web', pods, index).map((p) => p.metadata.name)).toEqual(['old', 'a', 'b']);
  });

  test('a bind costs two writes: the pod CAS, then one status write of the claim with the binding', async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('p1', idle()));
    await put(model, podClaim('c', withReleaseFinalizer()));
    const before = model.writes.length;
    await reconcilePodClaim(deps, key('c'));
    expect(model.writes.slice(before).map((w) => `${w.verb} ${w.kind}`)).toEqual([
      'patch Pod',
      'patchStatus PodClaim',
    ]);
    const c = model.getNow('PodClaim', key('c'));
    const pod = model.getNow('Pod', key('p1'));
    expect(c.status).toMatchObject({
      phase: 'Bound',
      podName: 'p1',
      nodeName: 'n1',
      podUID: pod.metadata.uid,
    });
    // Nothing of the binding is in spec or the annotations, and spec did not change (no new generation).
    expect(c.spec).toEqual({ poolName: 'web', lostPolicy: 'Rebind' });
    expect(c.metadata.annotations?.['claimkit.dev/pod-uid']).toBeUndefined();
    expect(c.metadata.generation).toBe(1);
    expect(pod.metadata.labels).toMatchObject({
      [LABEL_CLAIMED_BY]: 'c',
      [LABEL_STATE]: 'Bound',
    });
  });

  test("the bind's claim write is a CAS: a stale claim records nothing, the next pass adopts the pod", async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('p1', idle()));
    await put(model, podClaim('c', withReleaseFinalizer()));
    const d = decidePodClaim((await gatherPodClaim(deps, key('c')))!);
    const cur = model.getNow('PodClaim', key('c'));
    // Someone writes the claim between the decision and its writes.
    await model.update({ ...cur, metadata: { ...cur.metadata, labels: { team: 'a' } } });
    const r = await applyDecision(model, d);
    expect(r.failed?.error.reason).toBe('Conflict');
    expect(model.getNow('PodClaim', key('c')).status?.podName).toBeUndefined();
    await run(deps, 'c');
    expect(model.getNow('PodClaim', key('c')).status?.podName).toBe('p1');
  });

  test('two claims deciding from the same stale view cannot both win one pod (CAS on the pod)', async () => {
    const { model, deps, clock } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('p1', idle()));
    await put(model, podClaim('c1', withReleaseFinalizer()));
    await put(model, podClaim('c2', withReleaseFinalizer()));
    const snap1 = await gatherPodClaim(deps, key('c1'));
    const snap2 = await gatherPodClaim(deps, key('c2'));
    const r1 = await applyDecision(model, decidePodClaim(snap1!));
    const r2 = await applyDecision(model, decidePodClaim(snap2!));
    expect(r1.failed).toBeUndefined();
    expect(r2.failed?.error.reason).toBe('Conflict');
    expect(model.getNow('PodClaim', key('c2')).status?.podName ?? '').toBe('');
    expect(converged(model, clock.now()).filter((v) => v.invariant === 'P1')).toEqual([]);
  });

  test('a crash after the pod CAS resumes by adopting the pod', async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('p1', idle()));
    await put(model, poolPod('p2', idle()));
    await put(model, podClaim('c', withReleaseFinalizer()));
    const d = decidePodClaim((await gatherPodClaim(deps, key('c')))!);
    const first = d.writes[0]!;
    expect(first.op).toBe('patch');
    const chosen = (first as { key: { name: string } }).key.name;
    await applyDecision(model, { ...d, writes: d.writes.slice(0, 1) });
    await run(deps, 'c');
    expect(model.getNow('PodClaim', key('c')).status?.podName).toBe(chosen);
    const other = chosen === 'p1' ? 'p2' : 'p1';
    expect(model.getNow('Pod', key(other)).metadata.labels?.[LABEL_STATE]).toBe('Idle');
  });

  test('a claim created without the finalizer gets it first, in a write of its own, then binds in two', async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('p1', idle()));
    await put(model, podClaim('c'));
    const before = model.writes.length;
    await run(deps, 'c');
    expect(model.writes.slice(before).map((w) => `${w.verb} ${w.kind}`)).toEqual([
      'update PodClaim',
      'patch Pod',
      'patchStatus PodClaim',
    ]);
    const c = model.getNow('PodClaim', key('c'));
    expect(c.metadata.finalizers).toEqual(['claimkit.dev/release']);
    expect(c.status?.podName).toBe('p1');
    expect(c.status?.observedGeneration).toBe(c.metadata.generation);
    const after = model.writes.length;
    await reconcilePodClaim(deps, key('c'));
    expect(model.writes.length).toBe(after);
  });

  test('claims binding at once spread over the oldest Idle pods instead of racing for one', async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    for (let i = 0; i < 8; i++) await put(model, poolPod(`p${i}`, idle()));
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const n of names) await put(model, podClaim(n, withReleaseFinalizer()));
    // Every claim decides from the same snapshot before any writes (as concurrent workers would).
    const decisions = [];
    for (const n of names) decisions.push(decidePodClaim((await gatherPodClaim(deps, key(n)))!));
    const picked = decisions.map((d) => (d.writes[0] as { key: { name: string } }).key.name);
    expect(new Set(picked).size).toBeGreaterThan(1);
    let conflicts = 0;
    for (const d of decisions) if ((await applyDecision(model, d)).failed) conflicts++;
    expect(conflicts).toBe(names.length - new Set(picked).size);
  });
});

describe('migration', () => {
  for (const policy of ['Recycle', 'Delete'] as const) {
    test(`every step is resumable after a crash at any write (releasePolicy ${policy})`, async () => {
      // Crash after k writes of every decision, for each k, and check the migration still finishes.
      for (let crashAt = 0; crashAt < 3; crashAt++) {
        const { model, deps, clock } = world();
        await put(model, podPool('web', withReleasePolicy(policy)));
        const c = await put(
          model,
          podClaim('c', withReleaseFinalizer(), boundTo('p1', 'n1'), requestMigration('test')),
        );
        await put(model, poolPod('p1', claimedBy(c)));
        await put(model, poolPod('p2', idle()));
        for (let i = 0; i < 20; i++) {
          const snap = await gatherPodClaim(deps, key('c'));
          const d = decidePodClaim(snap!);
          if (d.writes.length === 0) break;
          await applyDecision(model, {
            ...d,
            writes: i === 0 || i === 2 ? d.writes.slice(0, crashAt) : d.writes,
          });
        }
        const done = model.getNow('PodClaim', key('c'));
        expect(done.status?.podName).toBe('p2');
        expect(done.status?.sourcePod).toBeUndefined();
        expect(done.metadata.annotations?.[ANNOTATION_MIGRATE]).toBeUndefined();
        expect(done.status?.phase).toBe('Bound');
        // The count is written with the binding, in the same write: exactly one.
        expect(done.status?.migrations).toBe(1);
        const p1 = model.tryGetNow('Pod', key('p1'));
        if (policy === 'Delete') {
          expect(p1 === undefined || p1.metadata.deletionTimestamp !== undefined).toBe(true);
        } else {
          expect(p1?.metadata.labels).toMatchObject({ [LABEL_STATE]: 'Idle' });
          expect(p1?.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
        }
        expect(converged(model, clock.now())).toEqual([]);
      }
    });
  }

  test('the source drains for drainSeconds before it is released', async () => {
    const { model, deps, clock } = world();
    await put(model, podPool('web', withDrainSeconds(30)));
    const c = await put(
      model,
      podClaim('c', withReleaseFinalizer(), boundTo('p1', 'n1'), requestMigration('test', 'p2')),
    );
    await put(model, poolPod('p1', claimedBy(c)));
    await put(model, poolPod('p0', idle()));
    await put(model, poolPod('p2', idle()));
    await run(deps, 'c');
    expect(model.getNow('PodClaim', key('c')).status).toMatchObject({ podName: 'p2', sourcePod: 'p1' });
    expect(model.getNow('Pod', key('p1')).metadata.labels?.[LABEL_STATE]).toBe('Draining');
    clock.advance(29_000);
    await reconcilePodClaim(deps, key('c'));
    expect(model.getNow('PodClaim', key('c')).status?.sourcePod).toBe('p1');
    clock.advance(1_000);
    await run(deps, 'c');
    expect(model.getNow('PodClaim', key('c')).status?.sourcePod ?? '').toBe('');
    expect(model.getNow('Pod', key('p1')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
  });

  test('a stray source left Draining by a failed release is released while a new migration waits (sim seed 5)', async () => {
    const { model, deps, clock } = world();
    await put(model, podPool('web'));
    const c = await put(
      model,
      podClaim('c', withReleaseFinalizer(), boundTo('p2', 'n1'), requestMigration()),
    );
    await put(
      model,
      poolPod('p1', claimedBy(c), (p) => {
        p.metadata.labels!['claimkit.dev/state'] = 'Draining';
      }),
    );
    await put(model, poolPod('p2', claimedBy(c)));
    await reconcilePodClaim(deps, key('c'));
    expect(model.getNow('Pod', key('p1')).metadata.labels).toMatchObject({ [LABEL_STATE]: 'Idle' });
    expect(model.getNow('Pod', key('p1')).metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    // The released pod is then a fine migration target.
    await run(deps, 'c');
    expect(model.getNow('PodClaim', key('c')).status?.podName).toBe('p1');
    expect(model.getNow('PodClaim', key('c')).status?.sourcePod).toBeUndefined();
    expect(converged(model, clock.now())).toEqual([]);
  });

  test('no Idle target: the claim stays Bound and says why', async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    const c = await put(
      model,
      podClaim('c', withReleaseFinalizer(), boundTo('p1', 'n1'), requestMigration()),
    );
    await put(model, poolPod('p1', claimedBy(c)));
    const r = await reconcilePodClaim(deps, key('c'));
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    const after = model.getNow('PodClaim', key('c'));
    expect(after.status?.sourcePod ?? '').toBe('');
    expect(after.status?.conditions?.find((x) => x.type === 'Migrating')).toMatchObject({
      status: 'False',
      reason: 'MigrationPending',
    });
  });
});

describe('pool scaling', () => {
  test('keeps minIdle Idle pods, plus one per Pending claim, within maxPods', async () => {
    const { model, deps } = world();
    await put(model, podPool('web', withMinIdle(2), withMaxPods(3)));
    await reconcilePodPool(deps, key('web'));
    expect(model.listNow('Pod').length).toBe(2);
    await put(model, podClaim('c1', forPool('web'), withReleaseFinalizer()));
    await put(model, podClaim('c2', forPool('web'), withReleaseFinalizer()));
    await reconcilePodPool(deps, key('web'));
    expect(model.listNow('Pod').length).toBe(3);
    // Status follows on the next pass (the pod-create events trigger it).
    await reconcilePodPool(deps, key('web'));
    const pool = model.getNow('PodPool', key('web'));
    expect(pool.status).toMatchObject({ total: 3, idle: 3, bound: 0 });
    for (const p of model.listNow('Pod')) expect(p.metadata.ownerReferences?.[0]?.name).toBe('web');
  });

  test('scale-down deletes only Idle pods, and a concurrent bind wins', async () => {
    const { model, deps } = world();
    await put(model, podPool('web', withMinIdle(0)));
    const c = await put(model, podClaim('c', forPool('web'), withReleaseFinalizer()));
    await put(model, poolPod('idle-1', idle()));
    await put(model, poolPod('bound-1', claimedBy(c)));
    await put(
      model,
      poolPod('draining-1', claimedBy(c), (p) => {
        p.metadata.labels![LABEL_STATE] = 'Draining';
      }),
    );
    // The pool reads idle-1 as Idle; before its delete lands, a claim binds it.
    const racing: Client = {
      ...model,
      get: model.get.bind(model),
      list: async (kind: Kind, opts?: ListOptions) => {
        const r = await model.list(kind, opts);
        if (kind === 'Pod' && opts?.labelSelector) {
          const p = model.getNow('Pod', key('idle-1'));
          await model.patch(
            'Pod',
            key('idle-1'),
            {
              metadata: { labels: { [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'c' } },
            },
            { resourceVersion: p.metadata.resourceVersion! },
          );
        }
        return r;
      },
      create: model.create.bind(model),
      update: model.update.bind(model),
      updateStatus: model.updateStatus.bind(model),
      patch: model.patch.bind(model),
      patchStatus: model.patchStatus.bind(model),
      delete: model.delete.bind(model),
    } as Client;
    await reconcilePodPool({ ...deps, client: racing, cache: racing }, key('web')).catch((e) => {
      if (!isApiError(e)) throw e;
    });
    expect(model.tryGetNow('Pod', key('idle-1'))?.metadata.deletionTimestamp).toBeUndefined();
    expect(model.tryGetNow('Pod', key('bound-1'))).toBeDefined();
    expect(model.tryGetNow('Pod', key('draining-1'))).toBeDefined();
  });
});

describe('claim sets', () => {
  test('scale-out from a stale cache creates no duplicates (live read, deterministic names)', async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    const set = await put(model, podClaimSet('s', withReplicas(2)));
    // Two replicas: one with an up-to-date view, one whose cache has not seen the new claims.
    const stale = new CacheView(model, 0);
    await stale.list('PodClaim');
    stale.lag = 1000;
    await reconcilePodClaimSet(deps, key('s'));
    await reconcilePodClaimSet({ ...deps, cache: stale }, key('s')).catch((e) => {
      if (!isApiError(e, 'AlreadyExists')) throw e;
    });
    const claims = model
      .listNow('PodClaim')
      .filter((c) => c.metadata.ownerReferences?.[0]?.uid === set.metadata.uid);
    expect(claims.length).toBe(2);
    for (const c of claims) {
      expect(c.metadata.name).toMatch(/^s-[a-z0-9]{5}$/);
      expect(c.metadata.finalizers).toEqual(['claimkit.dev/release']);
    }
  });

  test('status counts and the label selector for the scale subresource', async () => {
    const { model, deps } = world();
    const set = await put(model, podClaimSet('s', withReplicas(2)));
    await put(model, podClaim('x', inSet(set), boundTo('p1')));
    await put(model, podClaim('y', inSet(set)));
    await reconcilePodClaimSet(deps, key('s'));
    const s = model.getNow('PodClaimSet', key('s'));
    expect(s.status).toMatchObject({
      replicas: 2,
      boundReplicas: 1,
      pending: 1,
      labelSelector: 'claimkit.dev/claim-set=s',
    });
  });

  test('scale-in is fenced on the resourceVersion read: a claim that starts migrating meanwhile is kept', async () => {
    const { model, deps } = world();
    const set = await put(model, podClaimSet('s', withReplicas(1)));
    const a = (await put(model, podClaim('a', inSet(set), boundTo('p1')))) as PodClaim;
    await put(model, podClaim('b', inSet(set), boundTo('p2')));
    // Fence: the decision is built from a read of `b`; `b` starts migrating before the delete.
    const liveList = model.list.bind(model);
    const client = {
      ...deps.client,
      list: async (kind: Kind, opts?: ListOptions) => {
        const r = await liveList(kind, opts);
        if (kind === 'PodClaim')
          await model.patch('PodClaim', key('b'), {
            metadata: { annotations: { [ANNOTATION_MIGRATE]: 'x' } },
          });
        return r;
      },
      get: model.get.bind(model),
      delete: model.delete.bind(model),
      patchStatus: model.patchStatus.bind(model),
    } as Client;
    await reconcilePodClaimSet({ ...deps, client }, key('s'));
    expect(model.getNow('PodClaim', key('b')).metadata.deletionTimestamp).toBeUndefined();
    expect(a.metadata.deletionTimestamp).toBeUndefined();
  });
});
