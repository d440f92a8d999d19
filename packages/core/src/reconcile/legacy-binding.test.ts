// Claims stored by the release that kept the binding in spec (podName, nodeName, sourcePod, the pod's
// UID in claimkit.dev/pod-uid, lostPolicy Fail's claimkit.dev/lost-at) keep their pods across the
// upgrade: the controller moves each binding to status before it decides anything else for the
// claim, and nothing reads the claim as unbound in between (the pool does not take the pod back).
import { describe, expect, test } from 'vitest';
import { bindingOf } from '../api/claim-binding.ts';
import { ANNOTATION_POD_UID, FINALIZER_RELEASE, LABEL_CLAIMED_BY, LABEL_STATE } from '../api/constants.ts';
import { writeTarget } from '../api/decision.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import { checkConvergence } from '../invariants/check.ts';
import type { ApiModel } from '../model/api-model.ts';
import { ANNOTATION_LOST_AT } from '../pool/lost-policy.ts';
import {
  claimedBy,
  idle,
  inPool,
  onNode,
  pod,
  podClaim,
  podPool,
  ready,
  withState,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { decidePodClaim, gatherPodClaim, reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

/** A claim as the previous release stored it: the binding in spec and annotations, status without it. */
function legacyClaim(
  name: string,
  b: { podName?: string; nodeName?: string; sourcePod?: string; uid?: string },
  status: PodClaim['status'],
  extra: { annotations?: Record<string, string>; lostPolicy?: 'Fail' } = {},
): PodClaim {
  return podClaim(name, (c) => {
    c.spec = {
      poolName: 'web',
      ...(b.podName ? { podName: b.podName } : {}),
      ...(b.nodeName ? { nodeName: b.nodeName } : {}),
      ...(b.sourcePod ? { sourcePod: b.sourcePod } : {}),
      ...(extra.lostPolicy ? { lostPolicy: extra.lostPolicy } : {}),
    };
    c.metadata.finalizers = [FINALIZER_RELEASE];
    c.metadata.annotations = {
      ...(b.uid ? { [ANNOTATION_POD_UID]: `${b.podName}/${b.uid}` } : {}),
      ...extra.annotations,
    };
    c.status = status;
  });
}

async function upgradedWorld() {
  const w = world();
  const { model } = w;
  await put(
    model,
    podPool('web', (p) => {
      p.spec.minIdle = 1;
      p.spec.maxPods = 8;
    }),
  );
  const running = (name: string, ...mods: ((p: Pod) => void)[]) =>
    put(model, pod(name, inPool('web'), onNode('n1'), ready(), ...mods));
  const bound = await running('pod-a', withState('Bound'));
  const target = await running('pod-t', withState('Bound'));
  await running('pod-s', withState('Draining'));
  await running('pod-idle', idle());
  const a = await put(
    model,
    legacyClaim(
      'bound',
      { podName: 'pod-a', nodeName: 'n1', uid: bound.metadata.uid! },
      { phase: 'Bound', boundTime: model.nowTimestamp() },
    ),
  );
  const m = await put(
    model,
    legacyClaim(
      'migrating',
      { podName: 'pod-t', nodeName: 'n1', sourcePod: 'pod-s', uid: target.metadata.uid! },
      { phase: 'Migrating', boundTime: model.nowTimestamp(), migrations: 1 },
      { annotations: { 'claimkit.dev/migrate': 'upgrade' } },
    ),
  );
  const lostAt = model.nowTimestamp();
  await put(
    model,
    legacyClaim(
      'lost',
      {},
      { phase: 'Pending' },
      { annotations: { [ANNOTATION_LOST_AT]: lostAt }, lostPolicy: 'Fail' },
    ),
  );
  await model.patch('Pod', key('pod-a'), { metadata: claimedByMeta(a) });
  await model.patch('Pod', key('pod-t'), { metadata: claimedByMeta(m) });
  await model.patch('Pod', key('pod-s'), { metadata: claimedByMeta(m) });
  return { ...w, lostAt };
}

function claimedByMeta(c: PodClaim) {
  const p = pod('x', claimedBy(c));
  return { labels: { [LABEL_CLAIMED_BY]: c.metadata.name }, annotations: p.metadata.annotations };
}

async function settle(w: { model: ApiModel; deps: Parameters<typeof reconcilePodClaim>[0] }, rounds = 6) {
  for (let i = 0; i < rounds; i++) {
    for (const name of ['bound', 'migrating', 'lost']) await reconcilePodClaim(w.deps, key(name));
    await reconcilePodPool(w.deps, key('web'));
  }
}

describe('an upgrade from the release that kept the binding in spec', () => {
  test('every reader sees the legacy binding before the move: the claims hold their pods', async () => {
    const w = await upgradedWorld();
    const claims = w.model.listNow('PodClaim', { namespace: NS });
    const byName = new Map(claims.map((c) => [c.metadata.name, c]));
    expect(bindingOf(byName.get('bound')!)).toMatchObject({ podName: 'pod-a', nodeName: 'n1' });
    expect(bindingOf(byName.get('migrating')!)).toMatchObject({ podName: 'pod-t', sourcePod: 'pod-s' });
    // The pool reconciles first (the new controller's pool may well): it releases nothing.
    await reconcilePodPool(w.deps, key('web'));
    for (const p of ['pod-a', 'pod-t', 'pod-s'])
      expect(w.model.getNow('Pod', key(p)).metadata.labels?.[LABEL_STATE], p).not.toBe('Idle');
  });

  test('the first decision for a legacy claim is the move: one status CAS, then spec cleared', async () => {
    const w = await upgradedWorld();
    const d1 = decidePodClaim((await gatherPodClaim(w.deps, key('bound')))!);
    expect(d1.writes).toHaveLength(1);
    expect(d1.writes[0]).toMatchObject({
      op: 'patchStatus',
      patch: { status: { podName: 'pod-a', nodeName: 'n1', podUID: expect.any(String), sourcePod: null } },
      precondition: { resourceVersion: expect.any(String) },
    });
    await reconcilePodClaim(w.deps, key('bound'));
    const d2 = decidePodClaim((await gatherPodClaim(w.deps, key('bound')))!);
    expect(d2.writes.map((x) => x.op)).toEqual(['update']);
    await reconcilePodClaim(w.deps, key('bound'));
    const c = w.model.getNow('PodClaim', key('bound'));
    expect(c.spec).toEqual({ poolName: 'web', lostPolicy: 'Rebind' });
    expect(c.metadata.annotations?.[ANNOTATION_POD_UID]).toBeUndefined();
    expect(c.status).toMatchObject({ phase: 'Bound', podName: 'pod-a', nodeName: 'n1' });
    expect(c.status?.podUID).toBe(w.model.getNow('Pod', key('pod-a')).metadata.uid);
    // Nothing more to write to the claim (its pod gets the disruption hints this fixture lacks).
    const d3 = decidePodClaim((await gatherPodClaim(w.deps, key('bound')))!);
    expect(d3.writes.filter((x) => writeTarget(x).kind === 'PodClaim')).toEqual([]);
  });

  test('Bound, migrating and Lost-for-good claims come through with their pods, and no invariant breaks', async () => {
    const w = await upgradedWorld();
    await settle(w);
    const bound = w.model.getNow('PodClaim', key('bound'));
    expect(bound.status).toMatchObject({ phase: 'Bound', podName: 'pod-a' });
    expect(w.model.getNow('Pod', key('pod-a')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('bound');
    // The migration finished on its target; the source went back to the pool.
    const migrating = w.model.getNow('PodClaim', key('migrating'));
    expect(migrating.status).toMatchObject({ phase: 'Bound', podName: 'pod-t' });
    expect(migrating.status?.sourcePod).toBeUndefined();
    expect(migrating.metadata.annotations?.['claimkit.dev/migrate']).toBeUndefined();
    expect(w.model.getNow('Pod', key('pod-t')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('migrating');
    expect(w.model.tryGetNow('Pod', key('pod-s'))?.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    // lostPolicy Fail's mark became lostTime: the claim stays Lost while an Idle pod waits.
    const lost = w.model.getNow('PodClaim', key('lost'));
    expect(lost.status?.lostTime).toBe(w.lostAt);
    expect(lost.metadata.annotations?.[ANNOTATION_LOST_AT]).toBeUndefined();
    expect(lost.status?.podName ?? '').toBe('');
    expect(lost.status?.phase).toBe('Lost');
    for (const c of w.model.listNow('PodClaim', { namespace: NS })) {
      expect(c.spec.podName, c.metadata.name).toBeUndefined();
      expect(c.spec.sourcePod, c.metadata.name).toBeUndefined();
    }
    expect(w.events.filter((e) => e.reason === 'Lost')).toEqual([]);
    expect(w.tracker.violations).toEqual([]);
    const state = {
      captures: [],
      pods: w.model.listNow('Pod', { namespace: NS }),
      claims: w.model.listNow('PodClaim', { namespace: NS }),
    };
    expect(checkConvergence(state, w.model.clock.now())).toEqual([]);
  });
});
