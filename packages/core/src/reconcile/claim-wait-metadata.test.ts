// Unit tests on the in-memory API model for issue 12's claim side: a claim says why it waits (one
// Event per reason), podMetadata rides the bind's CAS write and a release undoes exactly it,
// lostPolicy Fail keeps a Lost claim Lost, and pods carry the disruption hints of their state.
import { describe, expect, test } from 'vitest';
import { findCondition } from '../api/conditions.ts';
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_DELETION_COST,
  ANNOTATION_DO_NOT_DISRUPT,
  ANNOTATION_SAFE_TO_EVICT,
  LABEL_CLAIMED_BY,
  LABEL_STATE,
} from '../api/constants.ts';
import type { Client } from '../api/ports.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import { checkConvergence } from '../invariants/check.ts';
import { checkClaimSide } from '../invariants/claim-side.ts';
import type { ApiModel } from '../model/api-model.ts';
import { idleDeletionCost } from '../pool/disruption-hints.ts';
import { ANNOTATION_POD_METADATA_KEYS, readPodMetadataRecord } from '../pool/pod-metadata.ts';
import { bindPodWrite } from '../pool/pods.ts';
import {
  boundTo,
  claimedBy,
  forPool,
  idle,
  inPool,
  ofTemplate,
  onNode,
  pod,
  podClaim,
  podClaimSet,
  podPool,
  podTemplate,
  poolStatus,
  ready,
  requestMigration,
  setClaimSpec,
  T0_MS,
  withLostPolicy,
  withMaxPods,
  withMinIdle,
  withPodMetadata,
  withReleaseFinalizer,
  withReleasePolicy,
  withReplicas,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { untilQuiet, type World, world } from '../testing/world.ts';
import { applyDecision } from './apply.ts';
import { decidePodClaim, gatherPodClaim, reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodClaimSet } from './podclaimset/index.ts';
import { newPod, reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('web'), onNode('n1'), ready(), ...mods);

/** Reconciles the claim until it asks for no immediate requeue. */
const settle = (deps: World['deps'], name: string) => untilQuiet(deps, reconcilePodClaim, name);

const boundCond = (c: PodClaim) => findCondition(c.status?.conditions, 'Bound');
const podWrites = (model: ApiModel) => model.writes.filter((w) => w.kind === 'Pod');

describe('a claim says why it waits', () => {
  test('missing pool: PoolNotFound, and no pod of that pool name is ever bound', async () => {
    const { model, deps, events } = world();
    // Idle, Ready pods labelled for the missing pool name (left over, or made by hand).
    await put(model, pod('stray', inPool('ghost'), onNode('n1'), ready(), idle()));
    await put(model, podClaim('c', forPool('ghost'), withReleaseFinalizer()));
    const setup = podWrites(model).length;
    for (let i = 0; i < 3; i++) await settle(deps, 'c');
    const c = model.getNow('PodClaim', key('c'));
    expect(c.status?.podName ?? '').toBe('');
    expect(c.status?.phase).toBe('Pending');
    expect(boundCond(c)).toMatchObject({ status: 'False', reason: 'PoolNotFound' });
    expect(boundCond(c)?.message).toContain('ghost');
    expect(model.getNow('Pod', key('stray')).metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    expect(podWrites(model).length).toBe(setup);
    // One Event for the reason, not one per reconcile.
    expect(events.filter((e) => e.reason === 'PoolNotFound')).toHaveLength(1);
  });

  test('missing pool: a requested migration (migrate-to a pod labelled with that pool name) moves nothing', async () => {
    const { model, deps } = world();
    const c = await put(
      model,
      podClaim(
        'c',
        forPool('ghost'),
        withReleaseFinalizer(),
        boundTo('p1', 'n1'),
        requestMigration('x', 'p2'),
      ),
    );
    await put(model, pod('p1', inPool('ghost'), onNode('n1'), ready(), claimedBy(c)));
    await put(model, pod('p2', inPool('ghost'), onNode('n1'), ready(), idle()));
    for (let i = 0; i < 3; i++) await settle(deps, 'c');
    const after = model.getNow('PodClaim', key('c'));
    expect(after.status?.podName).toBe('p1');
    expect(after.status?.sourcePod ?? '').toBe('');
    expect(findCondition(after.status?.conditions, 'Migrating')?.reason).toBe('PoolNotFound');
    expect(model.getNow('Pod', key('p2')).metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
  });

  test('pool at maxPods, then no Ready pod: one Event per reason change; an unchanged reason writes nothing', async () => {
    const { model, deps, events } = world();
    await put(
      model,
      podPool('web', withMaxPods(1), withMinIdle(0), poolStatus({ total: 1, idle: 0, bound: 1 })),
    );
    await put(model, podClaim('c', withReleaseFinalizer()));
    await settle(deps, 'c');
    let c = model.getNow('PodClaim', key('c'));
    expect(boundCond(c)).toMatchObject({ status: 'False', reason: 'PoolAtMaxPods' });
    expect(boundCond(c)?.message).toContain('1 of 1 pods');
    const writes = model.writes.length;
    for (let i = 0; i < 3; i++) await settle(deps, 'c');
    expect(model.writes.length).toBe(writes);
    // The pool grows: a pod exists but is not Ready yet.
    await model.patch('PodPool', key('web'), { spec: { maxPods: 3 } });
    await model.patchStatus('PodPool', key('web'), { status: { total: 2, idle: 1, bound: 1 } });
    await put(model, pod('warming', inPool('web'), idle()));
    await settle(deps, 'c');
    c = model.getNow('PodClaim', key('c'));
    expect(boundCond(c)).toMatchObject({ status: 'False', reason: 'NoReadyPod' });
    expect(boundCond(c)?.message).toContain('1 Idle of 2 pods');
    expect(events.map((e) => e.reason)).toEqual(['PoolAtMaxPods', 'NoReadyPod']);
    // A Ready pod: the bind's own status patch turns the condition True.
    await put(model, poolPod('p1', idle()));
    await settle(deps, 'c');
    c = model.getNow('PodClaim', key('c'));
    expect(c.status?.phase).toBe('Bound');
    expect(boundCond(c)).toMatchObject({ status: 'True', reason: 'Bound', message: 'bound to pod p1' });
  });

  test('waiting adds no write to a bind: still the pod CAS and the claim status', async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('p1', idle()));
    await put(model, podClaim('c', withReleaseFinalizer(), withPodMetadata({ team: 'a' })));
    const before = model.writes.length;
    await settle(deps, 'c');
    expect(model.writes.slice(before).map((w) => `${w.verb} ${w.kind}`)).toEqual([
      'patch Pod',
      'patchStatus PodClaim',
    ]);
  });
});

describe('podMetadata', () => {
  const template = {
    ...podTemplate({ app: 'web', team: 'pool' }),
    metadata: { labels: { app: 'web', team: 'pool' }, annotations: { note: 'template' } },
  };

  /** A pool pod created from `template`: its labels, annotations and template hash (not outdated). */
  const templatePod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
    poolPod(
      name,
      ofTemplate(template),
      idle(),
      (p) => {
        p.metadata.labels = { ...p.metadata.labels, ...template.metadata.labels };
        p.metadata.annotations = { ...p.metadata.annotations, ...template.metadata.annotations };
      },
      ...mods,
    );

  async function boundWorld(...mods: Parameters<typeof podClaim>[1][]) {
    const w = world();
    await put(
      w.model,
      podPool('web', (p) => (p.spec.template = template), withMinIdle(0)),
    );
    await put(w.model, templatePod('p1'));
    await put(
      w.model,
      podClaim(
        'c',
        withReleaseFinalizer(),
        withPodMetadata({ team: 'a', extra: 'yes' }, { 'example.com/owner': 'alice', note: 'claim' }),
        ...mods,
      ),
    );
    return w;
  }

  test('applied in the bind CAS write itself, with the claimed-by label (one pod write)', async () => {
    const { model, deps } = await boundWorld();
    const d = decidePodClaim((await gatherPodClaim(deps, key('c')))!);
    const pw = d.writes.filter((w) => w.op === 'patch' && w.kind === 'Pod');
    expect(pw).toHaveLength(1);
    const setup = podWrites(model).length;
    await settle(deps, 'c');
    expect(podWrites(model)).toHaveLength(setup + 1);
    const p = model.getNow('Pod', key('p1'));
    expect(p.metadata.labels).toMatchObject({ [LABEL_CLAIMED_BY]: 'c', team: 'a', extra: 'yes', app: 'web' });
    expect(p.metadata.annotations).toMatchObject({ 'example.com/owner': 'alice', note: 'claim' });
    expect(readPodMetadataRecord(p)).toEqual({
      labels: { extra: null, team: 'pool' },
      annotations: { 'example.com/owner': null, note: 'template' },
    });
  });

  for (const path of ['finalizer', 'migration'] as const) {
    test(`a recycle (${path}) restores the pod exactly: template keys back, claim keys gone, no record`, async () => {
      const { model, deps, clock } = await boundWorld();
      await settle(deps, 'c');
      const boundPod = model.getNow('Pod', key('p1'));
      if (path === 'finalizer') {
        await model.delete('PodClaim', key('c'));
      } else {
        await put(model, templatePod('p2'));
        await model.patch('PodClaim', key('c'), {
          metadata: { annotations: { 'claimkit.dev/migrate': 'test', 'claimkit.dev/migrate-to': 'p2' } },
        });
      }
      for (let i = 0; i < 3; i++) await settle(deps, 'c').catch(() => undefined);
      const p = model.getNow('Pod', key('p1'));
      expect(p.metadata.labels?.[LABEL_STATE]).toBe('Idle');
      expect(p.metadata.labels).toMatchObject({ app: 'web', team: 'pool' });
      expect(p.metadata.labels?.extra).toBeUndefined();
      expect(p.metadata.annotations?.note).toBe('template');
      expect(p.metadata.annotations?.['example.com/owner']).toBeUndefined();
      expect(p.metadata.annotations?.[ANNOTATION_POD_METADATA_KEYS]).toBeUndefined();
      expect(p.metadata.annotations?.[ANNOTATION_DO_NOT_DISRUPT]).toBeUndefined();
      expect(p.metadata.annotations?.[ANNOTATION_SAFE_TO_EVICT]).toBeUndefined();
      expect(p.metadata.annotations?.[ANNOTATION_DELETION_COST]).toBe(
        String(idleDeletionCost(Date.parse(boundPod.metadata.creationTimestamp!))),
      );
      if (path === 'migration') {
        const t = model.getNow('Pod', key('p2'));
        expect(t.metadata.labels).toMatchObject({ [LABEL_CLAIMED_BY]: 'c', team: 'a', extra: 'yes' });
        expect(t.metadata.annotations).toMatchObject({ [ANNOTATION_DO_NOT_DISRUPT]: 'true' });
      }
      const state = { captures: [], pods: model.listNow('Pod'), claims: model.listNow('PodClaim') };
      expect(checkClaimSide(state)).toEqual([]);
      expect(checkConvergence(state, clock.now())).toEqual([]);
    });
  }

  test('a podMetadata changed after the bind: the release removes what the bind added, not what the spec says now', async () => {
    const { model, deps } = await boundWorld();
    await settle(deps, 'c');
    await model.patch('PodClaim', key('c'), {
      spec: { podMetadata: { labels: { other: 'x' }, annotations: null } },
    });
    await model.delete('PodClaim', key('c'));
    await settle(deps, 'c').catch(() => undefined);
    const p = model.getNow('Pod', key('p1'));
    expect(p.metadata.labels).toMatchObject({ app: 'web', team: 'pool', [LABEL_STATE]: 'Idle' });
    expect(p.metadata.labels?.extra).toBeUndefined();
    expect(p.metadata.labels?.other).toBeUndefined();
  });

  test('a re-label of our own pod applies the current podMetadata and keeps the original "before" values', () => {
    const c = podClaim('c', withPodMetadata({ team: 'b' }));
    c.metadata.uid = 'u1';
    const p = poolPod('p1', claimedBy(c), (x) => {
      x.metadata.labels = { ...x.metadata.labels, team: 'a', extra: 'yes' };
      x.metadata.annotations = {
        ...x.metadata.annotations,
        [ANNOTATION_POD_METADATA_KEYS]: JSON.stringify({
          labels: { team: 'pool', extra: null },
          annotations: {},
        }),
      };
    });
    const w = bindPodWrite(p, c);
    if (w.op !== 'patch') throw new Error('expected a patch');
    const md = (
      w.patch as { metadata: { labels: Record<string, unknown>; annotations: Record<string, unknown> } }
    ).metadata;
    expect(md.labels).toMatchObject({ team: 'b', extra: null });
    expect(JSON.parse(md.annotations[ANNOTATION_POD_METADATA_KEYS] as string)).toEqual({
      labels: { team: 'pool' },
      annotations: {},
    });
  });

  test('the CRD refuses claimkit.dev/ keys and the hint annotations (the model evaluates the same CEL)', async () => {
    const { model } = world();
    const bad = [
      withPodMetadata({ [LABEL_STATE]: 'Idle' }),
      withPodMetadata({}, { [ANNOTATION_CLAIMED_BY_UID]: 'x' }),
      withPodMetadata({}, { [ANNOTATION_DO_NOT_DISRUPT]: 'false' }),
    ];
    for (const [i, mod] of bad.entries()) {
      await expect(model.create(podClaim(`bad-${i}`, mod))).rejects.toThrow(/podMetadata may not set/);
    }
    await expect(
      model.create(podClaim('ok', withPodMetadata({ 'example.com/x': 'y' }))),
    ).resolves.toBeDefined();
  });

  test('a claim admitted without the CRD rule still cannot set claimkit keys through podMetadata', () => {
    const c = podClaim(
      'c',
      withPodMetadata({ [LABEL_STATE]: 'Idle', ok: '1' }, { [ANNOTATION_DO_NOT_DISRUPT]: 'false' }),
    );
    const w = bindPodWrite(poolPod('p1', idle()), c);
    if (w.op !== 'patch') throw new Error('expected a patch');
    const md = (
      w.patch as { metadata: { labels: Record<string, unknown>; annotations: Record<string, unknown> } }
    ).metadata;
    expect(md.labels[LABEL_STATE]).toBe('Bound');
    expect(md.labels.ok).toBe('1');
    expect(md.annotations[ANNOTATION_DO_NOT_DISRUPT]).toBe('true');
  });

  test('a PodClaimSet template gives its claims podMetadata and lostPolicy', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, podClaimSet('set', withReplicas(2), setClaimSpec({ labels: { team: 'a' } }, 'Fail')));
    const deps = { client: model as Client, cache: model, now: () => clock.now() };
    await reconcilePodClaimSet(deps, key('set'));
    const claims = model.listNow('PodClaim');
    expect(claims).toHaveLength(2);
    for (const c of claims)
      expect(c.spec).toMatchObject({ podMetadata: { labels: { team: 'a' } }, lostPolicy: 'Fail' });
  });
});

describe('lostPolicy', () => {
  async function lostWorld(policy: 'Rebind' | 'Fail') {
    const w = world();
    await put(w.model, podPool('web'));
    const c = await put(w.model, podClaim('c', withReleaseFinalizer(), withLostPolicy(policy)));
    await put(w.model, poolPod('p1', idle()));
    await settle(w.deps, 'c');
    expect(w.model.getNow('PodClaim', key('c')).status?.podName).toBe('p1');
    await put(w.model, poolPod('p2', idle()));
    await w.model.delete('Pod', key('p1'));
    w.model.completePodDeletions();
    return { ...w, c };
  }

  test('defaults to Rebind: a Lost claim binds a fresh pod', async () => {
    const { model, deps } = await lostWorld('Rebind');
    expect(model.getNow('PodClaim', key('c')).spec.lostPolicy).toBe('Rebind');
    for (let i = 0; i < 3; i++) await settle(deps, 'c');
    expect(model.getNow('PodClaim', key('c')).status?.podName).toBe('p2');
  });

  test('Fail: the claim stays Lost with reason LostPolicyFail while Idle pods exist; one Event', async () => {
    const { model, deps, events, clock } = await lostWorld('Fail');
    for (let i = 0; i < 4; i++) await settle(deps, 'c');
    const c = model.getNow('PodClaim', key('c'));
    expect(c.status?.podName ?? '').toBe('');
    expect(c.status?.phase).toBe('Lost');
    expect(boundCond(c)).toMatchObject({ status: 'False', reason: 'LostPolicyFail' });
    expect(events.filter((e) => e.reason === 'LostPolicyFail')).toHaveLength(1);
    expect(model.getNow('Pod', key('p2')).metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    const state = { captures: [], pods: model.listNow('Pod'), claims: model.listNow('PodClaim') };
    // Convergence allows a Fail claim to stay Lost beside an Idle pod.
    expect(checkConvergence(state, clock.now())).toEqual([]);
    // Switching to Rebind is how a user recovers it.
    await model.patch('PodClaim', key('c'), { spec: { lostPolicy: 'Rebind' } });
    await settle(deps, 'c');
    expect(model.getNow('PodClaim', key('c')).status?.podName).toBe('p2');
  });

  test('Fail: a stale status patch after the Lost write (phase Bound) still never rebinds', async () => {
    const { model, deps } = await lostWorld('Fail');
    // The Lost decision is one write: the binding cleared with phase Lost and lostTime (a CAS).
    const d = decidePodClaim((await gatherPodClaim(deps, key('c')))!);
    expect(d.writes.map((w) => w.op)).toEqual(['patchStatus']);
    expect(d.writes[0]).toMatchObject({ precondition: { resourceVersion: expect.any(String) } });
    await applyDecision(model, d);
    // A stale replica's phase patch (UID-fenced, never the binding) says Bound again.
    await model.patchStatus('PodClaim', key('c'), { status: { phase: 'Bound' } });
    for (let i = 0; i < 3; i++) await settle(deps, 'c');
    const c = model.getNow('PodClaim', key('c'));
    expect(c.status?.podName ?? '').toBe('');
    expect(c.status?.lostTime).toBeDefined();
    expect(c.status?.phase).toBe('Lost');
  });
});

describe('disruption hints', () => {
  test('Bound pods carry do-not-disrupt and safe-to-evict=false; Idle pods a deletion cost, newer ones lower', async () => {
    const { model, deps, clock } = world();
    await put(model, podPool('web', withMinIdle(2), withReleasePolicy('Recycle')));
    const poolDeps = { client: model as Client, cache: model, now: () => clock.now() };
    await reconcilePodPool(poolDeps, key('web'));
    clock.advance(5000);
    await model.patch('PodPool', key('web'), { spec: { minIdle: 3 } });
    await reconcilePodPool(poolDeps, key('web'));
    const pods = model
      .listNow('Pod')
      .sort((a, b) => Date.parse(a.metadata.creationTimestamp!) - Date.parse(b.metadata.creationTimestamp!));
    expect(pods).toHaveLength(3);
    const cost = (p: Pod) => Number(p.metadata.annotations?.[ANNOTATION_DELETION_COST]);
    for (const p of pods) {
      expect(p.metadata.annotations?.[ANNOTATION_DO_NOT_DISRUPT]).toBeUndefined();
      expect(cost(p)).toBeLessThan(0);
    }
    expect(cost(pods[2]!)).toBeLessThan(cost(pods[0]!));
    // Bind one.
    for (const p of pods) {
      await model.patch('Pod', { namespace: NS, name: p.metadata.name }, { spec: { nodeName: 'n1' } });
      model.setPodStatusNow(
        { namespace: NS, name: p.metadata.name },
        { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      );
    }
    await put(model, podClaim('c', withReleaseFinalizer()));
    await settle(deps, 'c');
    const name = model.getNow('PodClaim', key('c')).status!.podName!;
    const bound = model.getNow('Pod', key(name));
    expect(bound.metadata.annotations).toMatchObject({
      [ANNOTATION_DO_NOT_DISRUPT]: 'true',
      [ANNOTATION_SAFE_TO_EVICT]: 'false',
    });
    expect(bound.metadata.annotations?.[ANNOTATION_DELETION_COST]).toBeUndefined();
    const state = { captures: [], pods: model.listNow('Pod'), claims: model.listNow('PodClaim') };
    expect(checkClaimSide(state)).toEqual([]);
  });

  test('a pod bound before the hints existed gets them (hints only), then nothing more is written', async () => {
    const { model, deps } = world();
    await put(model, podPool('web'));
    const c = await put(
      model,
      podClaim('c', withReleaseFinalizer(), boundTo('p1', 'n1'), withPodMetadata({ team: 'b' })),
    );
    await put(model, poolPod('p1', claimedBy(c)));
    for (let i = 0; i < 3; i++) await settle(deps, 'c');
    const p = model.getNow('Pod', key('p1'));
    expect(p.metadata.annotations).toMatchObject({
      [ANNOTATION_DO_NOT_DISRUPT]: 'true',
      [ANNOTATION_SAFE_TO_EVICT]: 'false',
    });
    // podMetadata applies at a bind, not to a pod already bound.
    expect(p.metadata.labels?.team).toBeUndefined();
    const writes = model.writes.length;
    await settle(deps, 'c');
    expect(model.writes.length).toBe(writes);
  });

  test('the Idle cost follows the scale-down order: newest first', () => {
    const pool = podPool('web');
    const older = newPod(pool, T0_MS);
    const newer = newPod(pool, T0_MS + 60_000);
    const cost = (p: Pod) => Number(p.metadata.annotations?.[ANNOTATION_DELETION_COST]);
    expect(cost(newer)).toBe(cost(older) - 60);
    expect(Number.isInteger(cost(older)) && cost(older) >= -(2 ** 31)).toBe(true);
  });
});
