// A pool pod whose containers have all finished (phase Succeeded or Failed: restartPolicy Never,
// OnFailure after an exit 0, an OOM kill under Never) never runs again. Core treated it as live: its
// claim stayed Bound to it forever, a release recycled it to Idle, and an Idle finished pod counted
// toward minIdle while it could never be bound. A finished pod is as good as gone (P2's spirit): the
// claim goes Lost, the pod is deleted (not recycled), and the pool replaces it. A container restarted
// in place (restartPolicy Always) keeps its pod Running: the claim keeps it.
import { describe, expect, test } from 'vitest';
import { LABEL_CLAIMED_BY, LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import type { Pod, PodPhase, PodStatus } from '../api/types.ts';
import { checkConvergence, checkSafety } from '../invariants/check.ts';
import { inPool, onNode, pod, podClaim, podPool, ready, withState } from '../testing/fixtures.ts';
import { putAll } from '../testing/model-helpers.ts';
import { world as harness } from '../testing/world.ts';
import { reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

const READY: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };

/** What the kubelet reports once the pod's only container exited for good. */
function finishedStatus(phase: Exclude<PodPhase, 'Pending' | 'Running' | 'Unknown'>, reason?: string) {
  const exitCode = phase === 'Succeeded' ? 0 : 137;
  return {
    phase,
    conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted' }],
    containerStatuses: [
      {
        name: 'main',
        restartCount: 0,
        containerID: 'containerd://1',
        state: { terminated: { exitCode, containerID: 'containerd://1', ...(reason ? { reason } : {}) } },
      },
    ],
  } satisfies PodStatus;
}

async function world(opts: { lostPolicy?: 'Rebind' | 'Fail'; minIdle?: number; restartPolicy?: string }) {
  const { clock, model, events, deps, tracker } = harness();
  await putAll(
    model,
    podPool('web', (p) => {
      p.spec.minIdle = opts.minIdle ?? 0;
      p.spec.maxPods = 4;
      p.spec.template.spec.restartPolicy = opts.restartPolicy ?? 'Never';
    }),
    pod('pod-x', inPool('web'), withState('Idle'), onNode('n1'), ready(), (p) => {
      p.spec.restartPolicy = opts.restartPolicy ?? 'Never';
    }),
    podClaim('app', (c) => {
      c.spec.poolName = 'web';
      c.spec.lostPolicy = opts.lostPolicy ?? 'Rebind';
    }),
  );
  /** The kubelet's part: pods the pool created start and become Ready; deletions complete. */
  const kubelet = () => {
    model.completePodDeletions();
    for (const p of model.listNow('Pod', { namespace: NS }))
      if ((p.status?.phase ?? 'Pending') === 'Pending' && !p.metadata.deletionTimestamp)
        model.setPodStatusNow(key(p.metadata.name), READY);
  };
  const settle = async (n = 8) => {
    for (let i = 0; i < n; i++) {
      await reconcilePodClaim(deps, key('app'));
      await reconcilePodPool(deps, key('web'));
      kubelet();
      clock.advance(1000);
    }
  };
  await reconcilePodClaim(deps, key('app')); // binds pod-x before the pool creates others
  await settle();
  const claim = model.getNow('PodClaim', key('app'));
  expect(claim.status?.podName).toBe('pod-x');
  expect(claim.status?.phase).toBe('Bound');
  const x = model.getNow('Pod', key('pod-x'));
  const poolPods = () =>
    model.listNow('Pod', { namespace: NS }).filter((p) => p.metadata.labels?.[LABEL_POOL] === 'web');
  const check = () => {
    const state = {
      captures: [],
      pods: model.listNow('Pod', { namespace: NS }),
      claims: model.listNow('PodClaim', { namespace: NS }),
    };
    expect(tracker.violations).toEqual([]);
    expect(checkSafety(state)).toEqual([]);
    expect(checkConvergence(state, clock.now())).toEqual([]);
  };
  return { model, clock, deps, events, tracker, settle, x, poolPods, check };
}

describe('a Bound pool pod whose containers finished', () => {
  for (const phase of ['Failed', 'Succeeded'] as const) {
    test(`pod goes ${phase}, lostPolicy Rebind: the claim is Lost (podName cleared), the pod is deleted, not recycled, and the claim binds a new Idle pod`, async () => {
      const w = await world({ lostPolicy: 'Rebind', minIdle: 1 });
      const before = w.poolPods().map((p) => p.metadata.name);
      expect(before).toHaveLength(2); // pod-x and the Idle pod minIdle keeps
      w.model.setPodStatusNow(key('pod-x'), finishedStatus(phase));
      await reconcilePodClaim(w.deps, key('app'));
      const lost = w.model.getNow('PodClaim', key('app'));
      expect(lost.status?.phase).toBe('Lost');
      expect(lost.status?.podName ?? '').toBe('');
      expect(lost.status?.nodeName ?? '').toBe('');
      expect(
        w.events.some((e) => e.reason === 'Lost' && e.message.includes(`has finished (phase ${phase})`)),
      ).toBe(true);
      await w.settle();
      // Deleted, never back in the pool as Idle.
      expect(w.model.tryGetNow('Pod', key('pod-x'))).toBeUndefined();
      const claim = w.model.getNow('PodClaim', key('app'));
      expect(claim.status?.phase).toBe('Bound');
      expect(claim.status?.podName).not.toBe('pod-x');
      const bound = w.model.getNow('Pod', key(claim.status!.podName!));
      expect(bound.metadata.labels?.[LABEL_CLAIMED_BY]).toBe('app');
      expect(bound.status?.phase).toBe('Running');
      // The pool keeps minIdle Idle pods besides the claim's.
      const idle = w.poolPods().filter((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle');
      expect(idle).toHaveLength(1);
      w.check();
    });

    test(`pod goes ${phase}, lostPolicy Fail: the claim is Lost and never bound again; the pod is deleted`, async () => {
      const w = await world({ lostPolicy: 'Fail', minIdle: 1 });
      w.model.setPodStatusNow(key('pod-x'), finishedStatus(phase));
      await w.settle();
      const claim = w.model.getNow('PodClaim', key('app'));
      expect(claim.status?.phase).toBe('Lost');
      expect(claim.status?.podName ?? '').toBe('');
      expect(w.model.tryGetNow('Pod', key('pod-x'))).toBeUndefined();
      // An Idle pod is there; the claim does not take it.
      const idle = w.poolPods().filter((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle');
      expect(idle.length).toBeGreaterThan(0);
      expect(idle.every((p) => p.metadata.labels?.[LABEL_CLAIMED_BY] === undefined)).toBe(true);
      w.check();
    });
  }

  test('an OOM kill under restartPolicy Never is just an exit (reason OOMKilled): the claim is Lost and the pod deleted', async () => {
    const w = await world({ lostPolicy: 'Fail' });
    w.model.setPodStatusNow(key('pod-x'), finishedStatus('Failed', 'OOMKilled'));
    await w.settle();
    expect(w.model.getNow('PodClaim', key('app')).status?.phase).toBe('Lost');
    expect(w.model.tryGetNow('Pod', key('pod-x'))).toBeUndefined();
    w.check();
  });

  test('restartPolicy Always: a container restarted in place (restartCount 1, Running) keeps the claim Bound to its pod', async () => {
    const w = await world({ restartPolicy: 'Always', minIdle: 1 });
    // Briefly not Ready while the container restarts, then Ready again: same name, same UID.
    w.model.setPodStatusNow(key('pod-x'), {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
      containerStatuses: [
        {
          name: 'main',
          restartCount: 1,
          containerID: 'containerd://2',
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 1, containerID: 'containerd://1' } },
        },
      ],
    });
    await w.settle(3);
    w.model.setPodStatusNow(key('pod-x'), {
      ...READY,
      containerStatuses: [
        { name: 'main', restartCount: 1, containerID: 'containerd://2', state: { running: {} } },
      ],
    });
    await w.settle(3);
    const claim = w.model.getNow('PodClaim', key('app'));
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.status?.podName).toBe('pod-x');
    const x = w.model.getNow('Pod', key('pod-x'));
    expect(x.metadata.uid).toBe(w.x.metadata.uid);
    expect(x.metadata.deletionTimestamp).toBeUndefined();
    expect(w.events.some((e) => e.reason === 'Lost')).toBe(false);
    w.check();
  });
});

describe('an Idle pool pod whose containers finished', () => {
  test('is deleted and replaced, never bound, and not counted as Idle', async () => {
    const w = await world({ minIdle: 2 });
    const idleBefore = w.poolPods().filter((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle');
    expect(idleBefore).toHaveLength(2);
    const dead = idleBefore[0]!.metadata.name;
    w.model.setPodStatusNow(key(dead), finishedStatus('Failed'));
    await reconcilePodPool(w.deps, key('web'));
    const gone = w.model.tryGetNow('Pod', key(dead));
    expect(gone === undefined || gone.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(w.model.getNow('PodPool', key('web')).status?.idle).toBe(1);
    expect(w.events.some((e) => e.message.includes('cannot serve') && e.message.includes('finished'))).toBe(
      true,
    );
    await w.settle();
    expect(w.model.tryGetNow('Pod', key(dead))).toBeUndefined();
    const idle = w.poolPods().filter((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle');
    expect(idle).toHaveLength(2);
    expect(idle.every((p: Pod) => p.status?.phase === 'Running')).toBe(true);
    expect(w.model.getNow('PodPool', key('web')).status?.idle).toBe(2);
    w.check();
  });

  test('a claim waiting while the only Idle pod has finished never binds it; it binds the replacement', async () => {
    const w = await world({ minIdle: 1, lostPolicy: 'Rebind' });
    const idle = w.poolPods().find((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle')!;
    w.model.setPodStatusNow(key(idle.metadata.name), finishedStatus('Succeeded'));
    await putAll(
      w.model,
      podClaim('second', (c) => {
        c.spec.poolName = 'web';
      }),
    );
    await reconcilePodClaim(w.deps, key('second'));
    expect(w.model.getNow('PodClaim', key('second')).status?.podName ?? '').toBe('');
    for (let i = 0; i < 8; i++) {
      await reconcilePodClaim(w.deps, key('second'));
      await w.settle(1);
    }
    const second = w.model.getNow('PodClaim', key('second'));
    expect(second.status?.phase).toBe('Bound');
    expect(second.status?.podName).not.toBe(idle.metadata.name);
    expect(w.model.tryGetNow('Pod', key(idle.metadata.name))).toBeUndefined();
    w.check();
  });
});
