// P7 (no leaked pod) regressions, from replays of seed B's literal state on the real control plane:
// claim B's spec.podName = pod X; X labelled claimed-by=A, state Bound; claim A deleting (finalizer
// pending). B must keep X in every order of A's finalize and B's own reconcile, a label naming a
// deleting, missing or non-referencing claim never takes a pod away, sourcePod == podName is
// repaired by clearing sourcePod (never by releasing the pod), and a Bound pod nobody holds is
// released by the pool after a live read.
import { describe, expect, test } from 'vitest';
import { LABEL_CLAIMED_BY, LABEL_STATE } from '../api/constants.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import { checkConvergence, checkNoLeakedPods } from '../invariants/check.ts';
import type { InvariantTracker } from '../invariants/tracker.ts';
import type { ApiModel } from '../model/api-model.ts';
import { rulesBreaking } from '../testing/broken-rules.ts';
import {
  boundTo,
  claimedBy,
  createdAt,
  inPool,
  migratingFrom,
  onNode,
  pod,
  podClaim,
  podPool,
  ready,
  withReleaseFinalizer,
  withState,
} from '../testing/fixtures.ts';
import { putAll } from '../testing/model-helpers.ts';
import { world as harness, settleAll, type World } from '../testing/world.ts';
import { applyDecision } from './apply.ts';
import { decidePodClaim, gatherPodClaim, reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

const world = (opts: { validators?: boolean } = {}) => harness({ schema: opts.validators !== false });

const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('web'), withState('Idle'), onNode('n1'), ready(), ...mods);

const webClaim = (name: string, ...mods: Parameters<typeof podClaim>[1][]) =>
  podClaim(
    name,
    (c) => {
      c.spec.poolName = 'web';
    },
    withReleaseFinalizer(),
    ...mods,
  );

/** Seed B's literal state, forced by direct writes as a legacy operator or a person would. */
async function seedBLiteral(w: ReturnType<typeof world>) {
  const { model } = w;
  const [, a, b] = (await putAll(
    model,
    podPool('web', (p) => {
      p.spec.minIdle = 0;
    }),
    webClaim('claim-a', createdAt(0)),
    webClaim('claim-b', createdAt(1), boundTo('pod-x', 'n1')),
  )) as [unknown, PodClaim, PodClaim];
  const x = (await putAll(model, poolPod('pod-x', withState('Bound'), claimedBy(a))))[0] as Pod;
  w.tracker.externalWriter = true;
  await model.delete('PodClaim', key('claim-a')); // finalizer pending
  w.tracker.externalWriter = false;
  return { a, b, x };
}

function expectBKeepsX(model: ApiModel, tracker: InvariantTracker) {
  const b = model.getNow('PodClaim', key('claim-b'));
  const x = model.getNow('Pod', key('pod-x'));
  expect(model.tryGetNow('PodClaim', key('claim-a'))).toBeUndefined();
  expect(b.status?.podName).toBe('pod-x');
  expect(b.status?.phase).toBe('Bound');
  expect(x.metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-b');
  expect(x.metadata.labels?.[LABEL_STATE]).toBe('Bound');
  const state = {
    captures: [],
    pods: model.listNow('Pod', { namespace: NS }),
    claims: model.listNow('PodClaim', { namespace: NS }),
  };
  expect(checkConvergence(state, model.clock.now())).toEqual([]);
  expect(tracker.violations).toEqual([]);
}

const settle = (w: World, names: string[]) =>
  settleAll(w, reconcilePodClaim, 'PodClaim', names, {
    eachRound: () => reconcilePodPool(w.deps, key('web')),
  });

describe('P7: seed B literal state (B references X, X labelled for deleting A)', () => {
  test('B reconciles first: the foreign label goes, B keeps X', async () => {
    const w = world();
    await seedBLiteral(w);
    await reconcilePodClaim(w.deps, key('claim-b'));
    // B did not go Lost: it removed the deleting claim's label and kept its reference.
    const b = w.model.getNow('PodClaim', key('claim-b'));
    expect(b.status?.podName).toBe('pod-x');
    expect(b.status?.phase).toBe('Bound');
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    await settle(w, ['claim-a', 'claim-b']);
    expectBKeepsX(w.model, w.tracker);
  });

  test("A's finalize first: only A's label goes, then B labels X again", async () => {
    const w = world();
    await seedBLiteral(w);
    await reconcilePodClaim(w.deps, key('claim-a'));
    expect(w.model.tryGetNow('PodClaim', key('claim-a'))).toBeUndefined();
    await settle(w, ['claim-b']);
    expectBKeepsX(w.model, w.tracker);
  });

  test("interleaved: A's finalize decides, B acts, then A's writes land", async () => {
    const w = world();
    await seedBLiteral(w);
    const aSnap = await gatherPodClaim(w.deps, key('claim-a'));
    const bSnap = await gatherPodClaim(w.deps, key('claim-b'));
    await applyDecision(w.model, decidePodClaim(bSnap!));
    await applyDecision(w.model, decidePodClaim(aSnap!)); // its pod write conflicts; the finalizer goes
    await settle(w, ['claim-a', 'claim-b']);
    expectBKeepsX(w.model, w.tracker);
  });

  test('A already gone (label names a missing claim): B keeps X, the pool does not release it', async () => {
    const w = world();
    await seedBLiteral(w);
    const a = w.model.getNow('PodClaim', key('claim-a'));
    await w.model.update({ ...a, metadata: { ...a.metadata, finalizers: [] } });
    expect(w.model.tryGetNow('PodClaim', key('claim-a'))).toBeUndefined();
    await reconcilePodPool(w.deps, key('web'));
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_STATE]).toBe('Bound');
    await settle(w, ['claim-b']);
    expectBKeepsX(w.model, w.tracker);
  });

  test('reverting the fix (a foreign label takes the pod) is caught as P7', async () => {
    const w = world();
    await seedBLiteral(w);
    await reconcilePodClaim(
      { ...w.deps, rules: rulesBreaking('P7-foreign-label-takes-pod') },
      key('claim-b'),
    );
    expect(w.model.getNow('PodClaim', key('claim-b')).status?.podName ?? '').toBe('');
    expect(w.tracker.violations.map((v) => v.invariant)).toContain('P7');
  });
});

describe('P7: which label takes a pod away', () => {
  test('a label naming a live claim that does not reference the pod takes nothing', async () => {
    const w = world();
    const [, l] = (await putAll(
      w.model,
      podPool('web'),
      webClaim('claim-l', createdAt(0), boundTo('pod-y', 'n1')),
      webClaim('claim-b', createdAt(1), boundTo('pod-x', 'n1')),
    )) as [unknown, PodClaim];
    await putAll(
      w.model,
      poolPod('pod-x', withState('Bound'), claimedBy(l)),
      poolPod('pod-y', withState('Bound'), claimedBy(l)),
    );
    await settle(w, ['claim-b', 'claim-l']);
    expect(w.model.getNow('PodClaim', key('claim-b')).status?.podName).toBe('pod-x');
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-b');
    expect(w.model.getNow('Pod', key('pod-y')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-l');
    expect(w.tracker.violations).toEqual([]);
  });

  test('a label naming a live claim that references the pod holds it: the other claim goes Lost', async () => {
    const w = world();
    const [, l] = (await putAll(
      w.model,
      podPool('web', (p) => {
        p.spec.minIdle = 0;
      }),
      webClaim('claim-l', createdAt(0), boundTo('pod-x', 'n1')),
      webClaim('claim-b', createdAt(1), boundTo('pod-x', 'n1')),
    )) as [unknown, PodClaim];
    await putAll(w.model, poolPod('pod-x', withState('Bound'), claimedBy(l)));
    await reconcilePodClaim(w.deps, key('claim-b'));
    const b = w.model.getNow('PodClaim', key('claim-b'));
    expect(b.status?.podName ?? '').toBe('');
    expect(b.status?.phase).toBe('Lost');
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-l');
  });
});

describe('P7: an unlabelled pod two claims reference', () => {
  test('a cache that still shows an older rival (gone on the server) never makes the claim give up its pod', async () => {
    // Soak seed 2013 (three replicas): a legacy writer pointed claim-b at claim-a's pod and stripped
    // its label; claim-a went away, but a lagging replica's cache still showed it referencing the pod.
    // The older-rival rule took the pod from claim-b on that cached reference: nobody held pod-x.
    const w = harness({ lag: 0 });
    await putAll(
      w.model,
      podPool('web', (p) => {
        p.spec.minIdle = 0;
      }),
      webClaim('claim-a', createdAt(0), boundTo('pod-x', 'n1')),
      webClaim('claim-b', createdAt(1), boundTo('pod-x', 'n1')),
      poolPod('pod-x', withState('Bound')),
    );
    w.cache.lag = 1; // the cache will not see claim-a go
    w.tracker.externalWriter = true;
    const a = w.model.getNow('PodClaim', key('claim-a'));
    await w.model.update({ ...a, metadata: { ...a.metadata, finalizers: [] } });
    w.cache.lag = 2;
    await w.model.delete('PodClaim', key('claim-a'));
    w.tracker.externalWriter = false;
    expect(w.model.tryGetNow('PodClaim', key('claim-a'))).toBeUndefined();
    expect((await w.cache.get('PodClaim', key('claim-a'))).status?.podName).toBe('pod-x');
    await reconcilePodClaim(w.deps, key('claim-b'));
    const b = w.model.getNow('PodClaim', key('claim-b'));
    expect(b.status?.podName).toBe('pod-x');
    expect(b.status?.phase).not.toBe('Lost');
    expect(w.tracker.violations).toEqual([]);
    w.cache.lag = 0;
    await settleAll(w, reconcilePodClaim, 'PodClaim', ['claim-b'], {
      eachRound: () => reconcilePodPool(w.deps, key('web')),
    });
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-b');
    expect(w.tracker.violations).toEqual([]);
  });
});

describe('P7: sourcePod == podName', () => {
  test('the controller clears sourcePod and never releases the claim’s own pod', async () => {
    // Without the CRD's CEL (a cluster that predates it, or a legacy writer), the state gets in.
    const w = world({ validators: false });
    const [, c] = (await putAll(
      w.model,
      podPool('web'),
      webClaim('claim-c', boundTo('pod-x', 'n1'), migratingFrom('pod-x')),
    )) as [unknown, PodClaim];
    await putAll(w.model, poolPod('pod-x', withState('Bound'), claimedBy(c)));
    const seen: string[] = [];
    w.model.watch(
      'Pod',
      {},
      {
        onEvent: (e) => {
          if (e.object.metadata.name === 'pod-x') seen.push(e.object.metadata.labels?.[LABEL_STATE] ?? '');
        },
      },
    );
    await settle(w, ['claim-c']);
    const after = w.model.getNow('PodClaim', key('claim-c'));
    expect(after.status?.podName).toBe('pod-x');
    expect(after.status?.sourcePod).toBeUndefined();
    expect(seen).not.toContain('Idle'); // never released, not even for a moment
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-c');
  });

  test('the CRD refuses the state in the first place', async () => {
    const w = world();
    await putAll(w.model, podPool('web'), webClaim('claim-c', boundTo('pod-x', 'n1')));
    await expect(
      w.model.patchStatus('PodClaim', key('claim-c'), { status: { sourcePod: 'pod-x' } }),
    ).rejects.toMatchObject({ reason: 'Invalid' });
  });
});

describe('P7: a pod nobody holds', () => {
  test('an unlabelled Bound pod no claim references is released by the pool (after a live read)', async () => {
    const w = world();
    await putAll(w.model, podPool('web'), poolPod('pod-x', withState('Bound')));
    expect(
      checkNoLeakedPods({ captures: [], claims: [], pods: w.model.listNow('Pod', { namespace: NS }) }),
    ).toHaveLength(1);
    await reconcilePodPool(w.deps, key('web'));
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
  });

  test('an unlabelled Bound pod a live claim references stays Bound and is labelled by that claim', async () => {
    const w = world();
    await putAll(
      w.model,
      podPool('web'),
      webClaim('claim-b', boundTo('pod-x', 'n1')),
      poolPod('pod-x', withState('Bound')),
    );
    await reconcilePodPool(w.deps, key('web'));
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_STATE]).toBe('Bound');
    await settle(w, ['claim-b']);
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('claim-b');
  });

  test('a migration source whose label a deleting claim dropped is released when the migration ends', async () => {
    const w = world();
    const [, c] = (await putAll(
      w.model,
      podPool('web', (p) => {
        p.spec.minIdle = 0;
      }),
      webClaim('claim-c', boundTo('pod-y', 'n1'), migratingFrom('pod-x')),
    )) as [unknown, PodClaim];
    await putAll(
      w.model,
      poolPod('pod-x', withState('Draining')),
      poolPod('pod-y', withState('Bound'), claimedBy(c)),
    );
    await settle(w, ['claim-c']);
    expect(w.model.getNow('PodClaim', key('claim-c')).status?.sourcePod ?? '').toBe('');
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
    expect(w.tracker.violations).toEqual([]);
  });
});
