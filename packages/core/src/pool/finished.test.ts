// Finished pool pods (phase Succeeded or Failed: their containers exited for good) piece by piece:
// the predicate, the claim's judgement of its pod, release, the pool's scaling, bind candidates, the
// claim's live confirmation and a migration whose source or target finished.
import { describe, expect, test } from 'vitest';
import { LABEL_CLAIMED_BY } from '../api/constants.ts';
import { isPodFinished } from '../api/pod-predicates.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import { classifyHolder } from '../capture/holder-liveness.ts';
import { judgeReferencedPod } from '../reconcile/podclaim/hold.ts';
import { gatherPodClaim, reconcilePodClaim } from '../reconcile/podclaim/index.ts';
import {
  boundTo,
  claimedBy,
  failed,
  forPool,
  idle,
  inPool,
  migratingFrom,
  onNode,
  pod,
  podClaim,
  podPhase,
  podPool,
  ready,
  refOf,
  running,
  succeeded,
  T0_MS,
  withDrainSeconds,
  withMaxPods,
  withMinIdle,
  withReleaseFinalizer,
  withResourceVersion,
  withState,
} from '../testing/fixtures.ts';
import { putAll } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { bindCandidates } from './bind-candidates.ts';
import { ClaimIndex } from './claim-index.ts';
import { releasePodWrite } from './pods.ts';
import { decideScaling } from './scaling.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('web'), withResourceVersion('7'), ...mods);

describe('isPodFinished', () => {
  test('Succeeded and Failed are finished; Pending, Running and Unknown are not', () => {
    expect(isPodFinished(pod('a', succeeded()))).toBe(true);
    expect(isPodFinished(pod('a', failed()))).toBe(true);
    expect(isPodFinished(pod('a'))).toBe(false);
    expect(isPodFinished(pod('a', ready()))).toBe(false);
    expect(isPodFinished(pod('a', podPhase('Unknown')))).toBe(false);
  });

  test('a capture holder that finished is still dead for the same reason (classifyHolder reuses it)', () => {
    const p = pod('h', failed());
    expect(classifyHolder(refOf(p), { found: true, pod: p })).toEqual({
      state: 'dead',
      reason: 'HolderFinished',
    });
  });
});

describe('judgeReferencedPod', () => {
  const claim = podClaim('app', forPool('web'), boundTo('pod-x', 'n1'));
  test('a finished pod labelled ours is lost, with the phase in the why', () => {
    for (const [mod, phase] of [
      [failed(), 'Failed'],
      [succeeded(), 'Succeeded'],
    ] as const) {
      const p = poolPod('pod-x', claimedBy(claim), mod);
      expect(judgeReferencedPod(claim, p, new ClaimIndex([claim]), undefined)).toEqual({
        kind: 'lost',
        why: `has finished (phase ${phase})`,
      });
    }
  });

  test('a running pod labelled ours is ours (a container restarted in place changes nothing)', () => {
    const p = poolPod('pod-x', claimedBy(claim), ready(), (x) => {
      x.status!.containerStatuses = [{ name: 'main', restartCount: 1, state: { running: {} } }];
    });
    expect(judgeReferencedPod(claim, p, new ClaimIndex([claim]), undefined)).toEqual({ kind: 'ours' });
  });
});

describe('releasePodWrite', () => {
  test('a finished pod is deleted as read (UID and resourceVersion), never recycled to Idle', () => {
    const p = poolPod('pod-x', claimedBy('app'), failed());
    const w = releasePodWrite(p, 'Recycle', 'release');
    expect(w).toMatchObject({
      op: 'delete',
      kind: 'Pod',
      key: key('pod-x'),
      preconditions: { uid: p.metadata.uid, resourceVersion: '7' },
    });
  });

  test('a running pod is still recycled', () => {
    const w = releasePodWrite(poolPod('pod-x', claimedBy('app'), ready()), 'Recycle', 'release');
    expect(w.op).toBe('patch');
  });
});

describe('decideScaling with finished Idle pods', () => {
  const base = (pods: Pod[], maxPods = 10) => ({
    pool: podPool('web', withMinIdle(2), withMaxPods(maxPods)),
    pods,
    pendingClaims: 0,
    expectations: { creates: 0, deletes: 0 },
    unservable: new Set<string>(),
    now: T0_MS,
    newPod: () => pod('new', inPool('web'), idle()),
  });

  test('they are deleted at once (resourceVersion precondition) and do not count toward the Idle target', () => {
    const pods = [
      poolPod('a', idle(), ready(), onNode('n1')),
      poolPod('b', idle(), failed(), onNode('n1')),
      poolPod('c', idle(), succeeded(), onNode('n1')),
    ];
    const d = decideScaling(base(pods));
    expect(d.writes.filter((w) => w.op === 'create')).toHaveLength(1);
    const deletes = d.writes.filter((w) => w.op === 'delete');
    expect(deletes.map((w) => w.op === 'delete' && w.key.name).sort()).toEqual(['b', 'c']);
    for (const w of deletes)
      expect(w.op === 'delete' && w.preconditions).toMatchObject({ resourceVersion: '7' });
    expect(d.finished).toBe(2);
    const ev = d.events.find((e) => e.reason === 'FinishedReplaced');
    expect(ev?.message).toBe(
      'deleting 2 Idle pod(s) that cannot serve (finished: their containers exited for good)',
    );
  });

  test('a finished pod is not "in progress" toward the target: with it the target looks met, yet it is replaced', () => {
    const pods = [poolPod('a', idle(), ready()), poolPod('b', idle(), failed())];
    const d = decideScaling(base(pods));
    expect(d.writes.filter((w) => w.op === 'create')).toHaveLength(1);
    expect(d.writes.filter((w) => w.op === 'delete')).toMatchObject([{ key: key('b') }]);
  });

  test('at maxPods the finished pod is deleted first; its replacement comes once there is room', () => {
    const pods = [poolPod('a', idle(), ready()), poolPod('b', idle(), failed())];
    const d = decideScaling(base(pods, 2));
    expect(d.writes.filter((w) => w.op === 'create')).toHaveLength(0);
    expect(d.writes.filter((w) => w.op === 'delete')).toHaveLength(1);
  });

  test('Bound finished pods are not the pool’s to delete (their claim releases them)', () => {
    const d = decideScaling(base([poolPod('a', claimedBy('app'), failed()), poolPod('b', idle(), ready())]));
    expect(d.writes.filter((w) => w.op === 'delete')).toEqual([]);
  });
});

describe('bind candidates', () => {
  test('a finished Idle pod is never a candidate, even with a stale Ready=True condition', () => {
    const stale = poolPod('a', idle(), ready(), failed());
    expect(stale.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).toBe(true);
    const ok = poolPod('b', idle(), ready());
    expect(bindCandidates('web', [stale, ok], new ClaimIndex([])).map((p) => p.metadata.name)).toEqual(['b']);
  });
});

describe('the claim side on the API model', () => {
  test('gather confirms live a finished pod that is labelled ours', async () => {
    const w = world();
    const [, c] = (await putAll(
      w.model,
      podPool('web', withMinIdle(0)),
      podClaim('app', forPool('web'), withReleaseFinalizer(), boundTo('pod-x', 'n1')),
    )) as [unknown, PodClaim];
    await putAll(w.model, pod('pod-x', inPool('web'), claimedBy(c), onNode('n1'), failed()));
    const snap = await gatherPodClaim(w.deps, key('app'));
    expect(snap?.liveCurrent).toMatchObject({ found: true });
  });

  test('a finished migration source is not drained: it is deleted and the migration ends', async () => {
    const w = world();
    const [, c] = (await putAll(
      w.model,
      podPool('web', withMinIdle(0), withDrainSeconds(600)),
      podClaim('app', forPool('web'), withReleaseFinalizer(), boundTo('pod-y', 'n1'), migratingFrom('pod-x')),
    )) as [unknown, PodClaim];
    await putAll(
      w.model,
      pod('pod-x', inPool('web'), claimedBy(c), onNode('n1'), failed()),
      pod('pod-y', inPool('web'), claimedBy(c), onNode('n1'), ready()),
    );
    for (let i = 0; i < 4; i++) {
      await reconcilePodClaim(w.deps, key('app'));
      w.model.completePodDeletions();
    }
    const claim = w.model.getNow('PodClaim', key('app'));
    expect(claim.status?.sourcePod ?? '').toBe('');
    expect(claim.status?.podName).toBe('pod-y');
    expect(claim.status?.phase).toBe('Bound');
    expect(w.model.tryGetNow('Pod', key('pod-x'))).toBeUndefined();
  });

  test('a finished migration target is lost: podName cleared, the target deleted, not recycled', async () => {
    const w = world();
    const [, c] = (await putAll(
      w.model,
      podPool('web', withMinIdle(0)),
      podClaim('app', forPool('web'), withReleaseFinalizer(), boundTo('pod-y', 'n1'), migratingFrom('pod-x')),
    )) as [unknown, PodClaim];
    await putAll(
      w.model,
      pod('pod-x', inPool('web'), claimedBy(c), withState('Draining'), onNode('n1'), running()),
      pod('pod-y', inPool('web'), claimedBy(c), onNode('n1'), succeeded()),
    );
    await reconcilePodClaim(w.deps, key('app'));
    const claim = w.model.getNow('PodClaim', key('app'));
    expect(claim.status?.podName ?? '').toBe('');
    expect(claim.status?.phase).toBe('Lost');
    for (let i = 0; i < 4; i++) {
      await reconcilePodClaim(w.deps, key('app'));
      w.model.completePodDeletions();
    }
    const y = w.model.tryGetNow('Pod', key('pod-y'));
    expect(y?.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    expect(y).toBeUndefined();
  });
});
