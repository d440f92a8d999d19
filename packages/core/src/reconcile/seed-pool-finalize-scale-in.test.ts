// Regression tests for seeds/pool-claim-finalize-scale-in.md (matrixone-operator #581/#589/#591):
// the claim-set scale-in during a migration, the stuck finalizer, the label left behind, the claim
// Bound to a pod that no longer exists, and pod-delete events matched only through a label.
import { describe, expect, test } from 'vitest';
import { FINALIZER_RELEASE, LABEL_CLAIMED_BY } from '../api/constants.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import { chooseScaleIn } from '../claimset/scale-in.ts';
import { checkConvergence, checkSafety } from '../invariants/check.ts';
import { mapEvent, type RoutingView } from '../loop/map-event.ts';
import { parseReconcileKey } from '../loop/reconcile-key.ts';
import type { ApiModel } from '../model/api-model.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import {
  boundTo,
  claimedBy,
  forPool,
  idle,
  inPool,
  inSet,
  migratingFrom,
  onNode,
  pod,
  podClaim,
  podClaimSet,
  podPool,
  ready,
  requestMigration,
  T0_MS,
  withReleaseFinalizer,
  withReplicas,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { settleAll, type World, world } from '../testing/world.ts';
import { reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodClaimSet } from './podclaimset/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('cn'), onNode('n1'), ready(), ...mods);

/** Reconcile until nothing asks to run again soon (a bounded loop, as a work queue would). */
const settle = (deps: World['deps'], model: ApiModel, names: string[]) =>
  settleAll({ model, deps }, reconcilePodClaim, 'PodClaim', names);

describe('seed B: scale-in during a migration', () => {
  /**
   * The seed's reproduction: claim set of 2; A bound to pod-1, B bound to pod-2; A's migration
   * is forced onto pod-2 (the two-claims-one-pod state the legacy operator produced); then A is
   * deleted by scale-in.
   */
  async function seedState() {
    const w = world();
    const { model } = w;
    await put(model, podPool('cn'));
    const set = await put(model, podClaimSet('cns', withReplicas(2)));
    const a = await put(
      model,
      podClaim('claim-a', inSet(set), withReleaseFinalizer(), boundTo('pod-2', 'n1'), migratingFrom('pod-1')),
    );
    const b = await put(
      model,
      podClaim('claim-b', inSet(set), withReleaseFinalizer(), boundTo('pod-2', 'n1')),
    );
    await put(
      model,
      poolPod('pod-1', claimedBy(a), (p) => {
        p.metadata.labels!['claimkit.dev/state'] = 'Draining';
      }),
    );
    await put(model, poolPod('pod-2', claimedBy(a)));
    return { ...w, a, b, set };
  }

  test('scale-in skips the migrating claim', async () => {
    const { model, deps } = await seedState();
    await model.patch('PodClaimSet', key('cns'), { spec: { replicas: 1 } });
    await reconcilePodClaimSet(deps, key('cns'));
    expect(model.getNow('PodClaim', key('claim-a')).metadata.deletionTimestamp).toBeUndefined();
    expect(model.getNow('PodClaim', key('claim-b')).metadata.deletionTimestamp).toBeDefined();
  });

  test('scale-in prefers Pending, then Lost, then the newest Bound, never a migrating claim (pure)', () => {
    const mk = (name: string, secs: number, ...mods: Parameters<typeof podClaim>[1][]) =>
      podClaim(
        name,
        (o) => {
          o.metadata.creationTimestamp = new Date(T0_MS + secs * 1000).toISOString();
        },
        ...mods,
      );
    const claims: PodClaim[] = [
      mk('old-bound', 0, boundTo('p1')),
      mk('new-bound', 10, boundTo('p2')),
      mk('migrating', 20, boundTo('p3'), migratingFrom('p4')),
      mk('requested', 30, boundTo('p5'), requestMigration()),
      mk('lost', 5, (o) => {
        o.status = { phase: 'Lost' };
      }),
      mk('pending', 1),
    ];
    expect(chooseScaleIn(claims, 4).victims.map((c) => c.metadata.name)).toEqual([
      'pending',
      'lost',
      'new-bound',
      'old-bound',
    ]);
    expect(chooseScaleIn(claims, 6)).toMatchObject({ blocked: 2 });
  });

  test('deleting the claim mid-migration: finalize completes, our label is removed, the other claim keeps its pod', async () => {
    const { model, deps, clock } = await seedState();
    await model.delete('PodClaim', key('claim-a'));
    const start = clock.now();
    await reconcilePodClaim(deps, key('claim-a'));
    expect(clock.now() - start).toBe(0);
    // Finalize completed in one pass: the claim is gone (its finalizer was the last one).
    expect(model.tryGetNow('PodClaim', key('claim-a'))).toBeUndefined();
    const pod2 = model.getNow('Pod', key('pod-2'));
    expect(pod2.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    // pod-1 was A's own: released back to the pool.
    const pod1 = model.getNow('Pod', key('pod-1'));
    expect(pod1.metadata.labels?.['claimkit.dev/state']).toBe('Idle');
    expect(pod1.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    // B still references pod-2, relabels it, and keeps it.
    await settle(deps, model, ['claim-b']);
    const b = model.getNow('PodClaim', key('claim-b'));
    expect(b.status?.podName).toBe('pod-2');
    expect(b.status?.phase).toBe('Bound');
    expect(model.getNow('Pod', key('pod-2')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-b');
    const state = { captures: [], pods: model.listNow('Pod'), claims: model.listNow('PodClaim') };
    expect(checkConvergence(state, clock.now())).toEqual([]);
  });

  test('the finalizer never stays: a pod write conflict only delays it by one pass', async () => {
    const { model, deps } = await seedState();
    await model.delete('PodClaim', key('claim-a'));
    model.faults.inject({ verbs: ['patch'], kinds: ['Pod'], reason: 'Conflict', times: 1 });
    const first = await reconcilePodClaim(deps, key('claim-a'));
    expect(first.requeueAfterMs).toBe(0);
    expect(model.getNow('PodClaim', key('claim-a')).metadata.finalizers).toContain(FINALIZER_RELEASE);
    await reconcilePodClaim(deps, key('claim-a'));
    expect(model.tryGetNow('PodClaim', key('claim-a'))).toBeUndefined();
  });
});

describe('seed B: a claim whose pod is gone', () => {
  test('becomes Lost, clears podName and nodeName, and binds a new Idle pod', async () => {
    const { model, deps } = world();
    await put(model, podPool('cn'));
    const c = await put(
      model,
      podClaim('c', forPool('cn'), withReleaseFinalizer(), boundTo('pod-gone', 'n1')),
    );
    await put(model, poolPod('pod-gone', claimedBy(c)));
    await model.delete('Pod', key('pod-gone'), { gracePeriodSeconds: 0 });
    await reconcilePodClaim(deps, key('c'));
    const lostClaim = model.getNow('PodClaim', key('c'));
    expect(lostClaim.status?.phase).toBe('Lost');
    expect(lostClaim.status?.podName ?? '').toBe('');
    expect(lostClaim.status?.nodeName ?? '').toBe('');
    expect(lostClaim.status?.lostTime).toBeDefined();
    await put(model, poolPod('pod-new', idle()));
    await settle(deps, model, ['c']);
    const rebound = model.getNow('PodClaim', key('c'));
    expect(rebound.status?.podName).toBe('pod-new');
    expect(rebound.status?.phase).toBe('Bound');
  });

  test('a NotFound from a lagging cache is confirmed by a live read before going Lost', async () => {
    const { model, deps } = world();
    await put(model, podPool('cn'));
    const c = await put(model, podClaim('c', withReleaseFinalizer(), boundTo('pod-1', 'n1')));
    await put(model, poolPod('pod-1', claimedBy(c)));
    const staleCache = {
      get: model.get.bind(model),
      list: async (kind: Parameters<ApiModel['list']>[0], opts?: Parameters<ApiModel['list']>[1]) =>
        kind === 'Pod' ? { items: [], resourceVersion: '1' } : model.list(kind, opts),
    } as typeof model;
    await reconcilePodClaim({ ...deps, cache: staleCache }, key('c'));
    const after = model.getNow('PodClaim', key('c'));
    expect(after.status?.podName).toBe('pod-1');
    expect(after.status?.phase).toBe('Bound');
  });
});

describe('seed B: pod events reach claims through spec.podName and spec.sourcePod (P6)', () => {
  const routingView = (claims: PodClaim[]): RoutingView => ({
    captures: () => [],
    pools: () => [],
    references: new ClaimIndex(claims),
  });
  /** The claims a pod event reaches through core's routing (the one the controller and simulator use). */
  const claimsReached = (claims: PodClaim[], old: Pod | undefined, cur: Pod | undefined) =>
    mapEvent('Pod', old, cur, routingView(claims))
      .map(parseReconcileKey)
      .filter((k) => k.kind === 'PodClaim')
      .map((k) => k.name);

  test('a pod-delete event reaches a claim whose label was already removed', () => {
    const claim = podClaim('c', boundTo('pod-1'));
    const migrating = podClaim('m', boundTo('pod-3'), migratingFrom('pod-2'));
    const claims = [claim, migrating];
    // A deletion of an unlabelled pod: only the reference (spec.podName, spec.sourcePod) routes it.
    expect(claimsReached(claims, poolPod('pod-1'), undefined)).toEqual(['c']);
    expect(claimsReached(claims, poolPod('pod-2'), undefined)).toEqual(['m']);
    // ...and the label still routes, for a pod no claim references yet (a bind in flight).
    expect(claimsReached(claims, undefined, poolPod('pod-9', claimedBy('x')))).toEqual(['x']);
  });

  test('end to end on the model: label stripped, pod deleted, the claim still goes Lost', async () => {
    const { model, deps } = world();
    await put(model, podPool('cn'));
    const c = await put(model, podClaim('c', withReleaseFinalizer(), boundTo('pod-1', 'n1')));
    await put(model, poolPod('pod-1', claimedBy(c)));
    const seen: string[] = [];
    // The model's events carry only the new object: the reference must carry the routing alone.
    model.watch(
      'Pod',
      { namespace: NS },
      {
        onEvent: (e) => {
          const [old, cur] = e.type === 'DELETED' ? [e.object, undefined] : [undefined, e.object];
          seen.push(...claimsReached(model.listNow('PodClaim'), old, cur));
        },
      },
    );
    await model.patch('Pod', key('pod-1'), { metadata: { labels: { [LABEL_CLAIMED_BY]: null } } });
    await model.delete('Pod', key('pod-1'), { gracePeriodSeconds: 0 });
    expect(seen.filter((n) => n === 'c').length).toBeGreaterThanOrEqual(2);
    await reconcilePodClaim(deps, key('c'));
    expect(model.getNow('PodClaim', key('c')).status?.phase).toBe('Lost');
    expect(
      checkSafety({ captures: [], pods: model.listNow('Pod'), claims: model.listNow('PodClaim') }),
    ).toEqual([]);
  });
});
