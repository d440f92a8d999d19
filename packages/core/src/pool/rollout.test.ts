// Template rollout and the scale subresource of PodPool, on the in-memory API model: outdated Idle
// pods are replaced only once current ones are Ready (Idle never below minIdle where maxPods allows a
// surge), outdated Bound pods are deleted on release, status and the condition report it, and
// /scale reads and writes minIdle with the pods' selector.
import { describe, expect, test } from 'vitest';
import { findCondition } from '../api/conditions.ts';
import { LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import { isApiError } from '../api/errors.ts';
import { isPodReady } from '../api/pod-predicates.ts';
import type { Pod, PodClaim, PodPool } from '../api/types.ts';
import { reconcilePodClaim } from '../reconcile/podclaim/index.ts';
import { reconcilePodPool } from '../reconcile/podpool/index.ts';
import {
  boundTo,
  claimedBy,
  createdAt,
  forPool,
  idle,
  inPool,
  onNode,
  pod,
  podClaim,
  podPool,
  podTemplate,
  ready,
  withMaxPods,
  withMinIdle,
  withoutTemplateHash,
  withReleaseFinalizer,
} from '../testing/fixtures.ts';
import { put, putAll } from '../testing/model-helpers.ts';
import { type World, world } from '../testing/world.ts';
import { outdatedIdleToDelete, scaleDownOrder } from './rollout.ts';
import { isUpdatedPod, LABEL_TEMPLATE_HASH, poolTemplateHash, templateHash } from './template-hash.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

const poolPods = (w: World): Pod[] =>
  w.model.listNow('Pod', { namespace: NS }).filter((p) => p.metadata.labels?.[LABEL_POOL] === 'web');
const idlePods = (w: World): Pod[] =>
  poolPods(w).filter((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle' && !p.metadata.deletionTimestamp);

/** The kubelet: every pool pod that is not Ready yet becomes Ready. */
const warmAll = (w: World) => w.warm(poolPods(w));

async function changeTemplate(w: World, image: string): Promise<PodPool> {
  const cur = w.model.getNow('PodPool', key('web'));
  return w.model.update({
    ...cur,
    spec: { ...cur.spec, template: podTemplate({ app: 'web' }, { containers: [{ name: 'main', image }] }) },
  });
}

describe('template hash', () => {
  test('is stable under key order, changes with the template, and fits a label value', () => {
    const a = podTemplate({ app: 'web', tier: 'x' });
    const b = { spec: a.spec, metadata: { labels: { tier: 'x', app: 'web' } } };
    expect(templateHash(a)).toBe(templateHash(b));
    expect(templateHash(a)).toMatch(/^[0-9a-f]{10}$/);
    expect(
      templateHash(podTemplate({ app: 'web' }, { containers: [{ name: 'main', image: 'other' }] })),
    ).not.toBe(templateHash(podTemplate({ app: 'web' })));
  });

  test('pool pods are created with the hash of the current template', async () => {
    const w = world();
    await put(w.model, podPool('web', withMinIdle(2)));
    await reconcilePodPool(w.deps, key('web'));
    const hash = poolTemplateHash(w.model.getNow('PodPool', key('web')));
    expect(poolPods(w).map((p) => p.metadata.labels?.[LABEL_TEMPLATE_HASH])).toEqual([hash, hash]);
  });
});

describe('rollout decisions', () => {
  const hash = templateHash(podTemplate({ app: 'web' }));
  const old = (name: string, ...m: Parameters<typeof pod>[1][]) =>
    pod(name, inPool('web'), idle(), ready(), withoutTemplateHash, ...m);
  const cur = (name: string, ...m: Parameters<typeof pod>[1][]) => pod(name, inPool('web'), idle(), ...m);
  const names = (ps: Pod[]) => ps.map((p) => p.metadata.name).sort();

  test('pods without the hash label are outdated', () => {
    expect(isUpdatedPod(old('a'), hash)).toBe(false);
    expect(isUpdatedPod(cur('b'), hash)).toBe(true);
  });

  test('outdated Idle pods stay while current ones warm, and go once enough are Ready', () => {
    const base = {
      templateHash: hash,
      desiredIdle: 2,
      roomToCreate: true,
      alreadyDeleting: new Set<string>(),
    };
    const warming = [old('o1'), old('o2'), cur('c1'), cur('c2')];
    expect(outdatedIdleToDelete({ ...base, idle: warming })).toEqual([]);
    const oneReady = [old('o1'), old('o2'), cur('c1', ready()), cur('c2')];
    expect(names(outdatedIdleToDelete({ ...base, idle: oneReady })).length).toBe(1);
    const allReady = [old('o1'), old('o2'), cur('c1', ready()), cur('c2', ready())];
    expect(names(outdatedIdleToDelete({ ...base, idle: allReady }))).toEqual(['o1', 'o2']);
  });

  test('without room to surge and nothing warming, one outdated pod makes room', () => {
    const x = {
      templateHash: hash,
      desiredIdle: 2,
      roomToCreate: false,
      alreadyDeleting: new Set<string>(),
      idle: [old('o1'), old('o2')],
    };
    expect(outdatedIdleToDelete(x)).toHaveLength(1);
    // ...but not while a current pod is still warming.
    expect(outdatedIdleToDelete({ ...x, idle: [old('o1'), cur('c1')] })).toEqual([]);
  });

  test('scale-down order: outdated, then not Ready, then newest', () => {
    const order = scaleDownOrder(
      [
        cur('ready-old', ready(), createdAt(1)),
        cur('ready-new', ready(), createdAt(9)),
        cur('cold'),
        old('o'),
      ],
      hash,
    ).map((p) => p.metadata.name);
    expect(order).toEqual(['o', 'cold', 'ready-new', 'ready-old']);
  });
});

describe('rollout on the model', () => {
  test('a template change replaces Idle pods, warm before delete, Idle never below minIdle', async () => {
    const w = world();
    await put(w.model, podPool('web', withMinIdle(3), withMaxPods(10)));
    await reconcilePodPool(w.deps, key('web'));
    warmAll(w);
    await reconcilePodPool(w.deps, key('web'));
    const before = new Set(idlePods(w).map((p) => p.metadata.name));
    expect(before.size).toBe(3);

    const pool = await changeTemplate(w, 'registry.example/claimkit/app:2');
    const hash = poolTemplateHash(pool);
    let minReadyIdle = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 10; round++) {
      await reconcilePodPool(w.deps, key('web'));
      w.model.completePodDeletions();
      minReadyIdle = Math.min(minReadyIdle, idlePods(w).filter(isPodReady).length);
      // The pods created for the new template never exceed maxPods.
      expect(poolPods(w).length).toBeLessThanOrEqual(10);
      warmAll(w);
    }
    expect(minReadyIdle).toBeGreaterThanOrEqual(3);
    const after = idlePods(w);
    expect(after).toHaveLength(3);
    expect(after.every((p) => isUpdatedPod(p, hash) && !before.has(p.metadata.name))).toBe(true);
    const status = w.model.getNow('PodPool', key('web')).status!;
    expect(status).toMatchObject({
      updated: 3,
      outdated: 0,
      templateHash: hash,
      selector: 'claimkit.dev/pool=web',
    });
    expect(findCondition(status.conditions, 'TemplateUpToDate')).toMatchObject({
      status: 'True',
      observedGeneration: pool.metadata.generation,
    });
  });

  test('with maxPods reached the rollout proceeds one pod at a time', async () => {
    const w = world();
    await put(w.model, podPool('web', withMinIdle(2), withMaxPods(2)));
    await reconcilePodPool(w.deps, key('web'));
    warmAll(w);
    const pool = await changeTemplate(w, 'registry.example/claimkit/app:2');
    for (let round = 0; round < 12; round++) {
      await reconcilePodPool(w.deps, key('web'));
      w.model.completePodDeletions();
      expect(poolPods(w).length).toBeLessThanOrEqual(2);
      warmAll(w);
    }
    const after = idlePods(w);
    expect(after).toHaveLength(2);
    expect(after.every((p) => isUpdatedPod(p, poolTemplateHash(pool)))).toBe(true);
  });

  test('an outdated Bound pod stays with its claim, the condition says so, and its release deletes it', async () => {
    const w = world();
    const [, claim] = await putAll(
      w.model,
      podPool('web', withMinIdle(0)),
      podClaim('c1', forPool('web'), boundTo('p-old', 'n1'), withReleaseFinalizer()),
    );
    await put(
      w.model,
      pod('p-old', inPool('web'), claimedBy(claim as PodClaim), onNode('n1'), ready(), withoutTemplateHash),
    );
    await reconcilePodPool(w.deps, key('web'));
    expect(w.model.getNow('Pod', key('p-old')).metadata.labels?.[LABEL_STATE]).toBe('Bound');
    const status = w.model.getNow('PodPool', key('web')).status!;
    expect(status).toMatchObject({ updated: 0, outdated: 1 });
    expect(findCondition(status.conditions, 'TemplateUpToDate')).toMatchObject({
      status: 'False',
      reason: 'OutdatedPodsBound',
    });

    await w.model.delete('PodClaim', key('c1'));
    for (let i = 0; i < 5; i++) await reconcilePodClaim(w.deps, key('c1'));
    w.model.completePodDeletions();
    // Recycle is the pool's policy, but an outdated pod is deleted, not returned to Idle.
    expect(w.model.listNow('Pod', { namespace: NS }).map((p) => p.metadata.name)).not.toContain('p-old');
    expect(w.model.listNow('PodClaim', { namespace: NS })).toEqual([]);
  });

  test('a current Bound pod is still recycled on release', async () => {
    const w = world();
    const [, claim] = await putAll(
      w.model,
      podPool('web', withMinIdle(0)),
      podClaim('c1', forPool('web'), boundTo('p-cur', 'n1'), withReleaseFinalizer()),
    );
    await put(w.model, pod('p-cur', inPool('web'), claimedBy(claim as PodClaim), onNode('n1'), ready()));
    await w.model.delete('PodClaim', key('c1'));
    for (let i = 0; i < 5; i++) await reconcilePodClaim(w.deps, key('c1'));
    expect(w.model.getNow('Pod', key('p-cur')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
  });
});

describe('scale subresource', () => {
  test('reads minIdle as replicas, the Idle count and the selector; writes minIdle', async () => {
    const w = world();
    await put(w.model, podPool('web', withMinIdle(2)));
    await reconcilePodPool(w.deps, key('web'));
    await reconcilePodPool(w.deps, key('web'));
    const scale = await w.model.getScale('PodPool', key('web'));
    expect(scale).toMatchObject({
      kind: 'Scale',
      spec: { replicas: 2 },
      status: { replicas: 2, selector: 'claimkit.dev/pool=web' },
    });
    // Scale to zero: the warm buffer drains.
    const zero = await w.model.updateScale('PodPool', key('web'), 0);
    expect(zero.spec.replicas).toBe(0);
    expect(w.model.getNow('PodPool', key('web')).spec.minIdle).toBe(0);
    await reconcilePodPool(w.deps, key('web'));
    w.model.completePodDeletions();
    expect(poolPods(w)).toEqual([]);
  });

  test('refuses what the API server refuses: above maxPods (CEL), negative, stale resourceVersion, no scale', async () => {
    const w = world();
    await put(w.model, podPool('web', withMinIdle(1), withMaxPods(5)));
    const errOf = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isApiError(await errOf(w.model.updateScale('PodPool', key('web'), 6)), 'Invalid')).toBe(true);
    expect(isApiError(await errOf(w.model.updateScale('PodPool', key('web'), -1)), 'Invalid')).toBe(true);
    expect(
      isApiError(
        await errOf(w.model.updateScale('PodPool', key('web'), 2, { resourceVersion: '1' })),
        'Conflict',
      ),
    ).toBe(true);
    expect(isApiError(await errOf(w.model.getScale('PodClaim', key('web'))), 'NotFound')).toBe(true);
    expect(w.model.getNow('PodPool', key('web')).spec.minIdle).toBe(1);
  });
});
