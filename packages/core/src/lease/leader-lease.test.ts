import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors.ts';
import type { Lease, Pod } from '../api/types.ts';
import { ApiModel } from '../model/api-model.ts';
import { ManualClock } from '../model/clock.ts';
import {
  currentLeader,
  decideLease,
  type LeaderLeaseParams,
  type LeaseHolderPod,
  leaseHolderPod,
  leaseStep,
  ownContainer,
  releaseLeaderLease,
  toMicroTime,
} from './leader-lease.ts';

const params = (identity: string): LeaderLeaseParams => ({
  namespace: 'sys',
  name: 'claimkit-controller',
  identity,
  leaseDurationSeconds: 15,
});

function lease(spec: Lease['spec']): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { namespace: 'sys', name: 'claimkit-controller', resourceVersion: '7' },
    spec,
  };
}

const T0 = Date.UTC(2026, 0, 1);

describe('decideLease', () => {
  it('creates a missing lease', () => {
    const d = decideLease(undefined, params('a'), T0);
    expect(d.action).toBe('create');
    if (d.action !== 'create') return;
    expect(d.lease.spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-01T00:00:00.000000Z',
      renewTime: '2026-01-01T00:00:00.000000Z',
      leaseTransitions: 0,
    });
  });

  it('renews its own live lease, keeping acquireTime and the read resourceVersion', () => {
    const cur = lease({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: toMicroTime(T0),
      renewTime: toMicroTime(T0),
    });
    const d = decideLease(cur, params('a'), T0 + 5000);
    expect(d.action).toBe('renew');
    if (d.action !== 'renew') return;
    expect(d.lease.spec.acquireTime).toBe(toMicroTime(T0));
    expect(d.lease.spec.renewTime).toBe(toMicroTime(T0 + 5000));
    expect(d.lease.metadata.resourceVersion).toBe('7');
  });

  it('waits while another holder is live, takes over once renewTime + duration has passed', () => {
    const cur = lease({ holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: toMicroTime(T0) });
    expect(decideLease(cur, params('b'), T0 + 14_999)).toEqual({
      action: 'wait',
      holder: 'a',
      expiresAt: T0 + 15_000,
    });
    const d = decideLease({ ...cur, spec: { ...cur.spec, leaseTransitions: 3 } }, params('b'), T0 + 15_000);
    expect(d.action).toBe('takeover');
    if (d.action !== 'takeover') return;
    expect(d.previousHolder).toBe('a');
    expect(d.lease.spec.holderIdentity).toBe('b');
    expect(d.lease.spec.leaseTransitions).toBe(4);
    expect(d.lease.metadata.resourceVersion).toBe('7');
  });

  it('acquires an empty (released) lease at once', () => {
    const cur = lease({ holderIdentity: '', leaseDurationSeconds: 1, renewTime: toMicroTime(T0) });
    expect(decideLease(cur, params('b'), T0).action).toBe('acquire');
    expect(currentLeader(cur, T0)).toBeUndefined();
  });

  it('a lease without renewTime is not held', () => {
    expect(decideLease(lease({ holderIdentity: 'a' }), params('b'), T0).action).toBe('takeover');
  });

  it('its own expired lease is re-acquired without a transition', () => {
    const cur = lease({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      renewTime: toMicroTime(T0),
      leaseTransitions: 2,
    });
    const d = decideLease(cur, params('a'), T0 + 60_000);
    expect(d.action).toBe('acquire');
    if (d.action === 'acquire') expect(d.lease.spec.leaseTransitions).toBe(2);
  });
});

describe('leaseStep on the API model', () => {
  it('one of two candidates leads; the other takes over after expiry, or at once after a release', async () => {
    const clock = new ManualClock(T0);
    const model = new ApiModel({ clock });
    const a = params('a');
    const b = params('b');
    expect((await leaseStep(model, a, clock.now())).outcome).toBe('leading');
    expect(await leaseStep(model, b, clock.now())).toMatchObject({ outcome: 'following', holder: 'a' });
    clock.advance(5000);
    expect((await leaseStep(model, a, clock.now())).decision?.action).toBe('renew');
    clock.advance(14_000);
    expect((await leaseStep(model, b, clock.now())).outcome).toBe('following');
    clock.advance(2000); // a stopped renewing 16 s ago
    const t = await leaseStep(model, b, clock.now());
    expect(t).toMatchObject({ outcome: 'leading', decision: { action: 'takeover', previousHolder: 'a' } });
    expect(t.lease?.spec.leaseTransitions).toBe(1);
    expect(await leaseStep(model, a, clock.now())).toMatchObject({ outcome: 'following', holder: 'b' });
    // Release: a gets it without waiting for expiry.
    expect(await releaseLeaderLease(model, a, clock.now())).toBe(false);
    expect(await releaseLeaderLease(model, b, clock.now())).toBe(true);
    expect((await leaseStep(model, a, clock.now())).decision?.action).toBe('acquire');
  });

  it('two candidates racing on the same read: the update is fenced, exactly one wins', async () => {
    const clock = new ManualClock(T0);
    const model = new ApiModel({ clock });
    await leaseStep(model, params('a'), clock.now());
    clock.advance(20_000);
    const read = await model.get('Lease', { namespace: 'sys', name: 'claimkit-controller' });
    const db = decideLease(read, params('b'), clock.now());
    const dc = decideLease(read, params('c'), clock.now());
    if (db.action !== 'takeover' || dc.action !== 'takeover') throw new Error('expected takeovers');
    await model.update(db.lease);
    await expect(model.update(dc.lease)).rejects.toMatchObject({ reason: 'Conflict' });
    // Through leaseStep the loser sees an unknown round, then follows.
    const r = await leaseStep(model, params('c'), clock.now());
    expect(r).toMatchObject({ outcome: 'following', holder: 'b' });
  });

  it('a concurrent create: AlreadyExists is an unknown round, not a crash', async () => {
    const model = new ApiModel({ clock: new ManualClock(T0) });
    const d = decideLease(undefined, params('a'), T0);
    if (d.action !== 'create') throw new Error('expected create');
    await model.create(d.lease);
    // b decided on "missing" too, then lost: simulate with a client whose get says NotFound.
    const stale = {
      get: async (): Promise<never> => {
        throw new ApiError('NotFound', 'leases "claimkit-controller" not found');
      },
      list: model.list.bind(model),
      create: model.create.bind(model),
      update: model.update.bind(model),
      patch: model.patch.bind(model),
      delete: model.delete.bind(model),
    };
    const r = await leaseStep(stale, params('b'), T0);
    expect(r.outcome).toBe('unknown');
    expect(r.error?.reason).toBe('AlreadyExists');
  });
});

describe('a standby judges the lease holder by its pod (name, UID, container), not only by expiry', () => {
  const C = 'controller';
  const running = (id: string, restartCount: number, startedAt = T0) => ({
    phase: 'Running' as const,
    containerStatuses: [
      { name: C, containerID: id, restartCount, state: { running: { startedAt: toMicroTime(startedAt) } } },
    ],
  });

  async function mkPod(model: ApiModel, name: string, status = running(`containerd://${name}-1`, 0)) {
    await model.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'sys', name },
      spec: { containers: [{ name: C, image: 'controller' }], nodeName: 'n1' },
    });
    return model.setPodStatusNow({ namespace: 'sys', name }, status);
  }

  const self = (pod: Pod): LeaseHolderPod => ({
    namespace: 'sys',
    name: pod.metadata.name,
    uid: pod.metadata.uid!,
    container: C,
    ...ownContainer(pod, { uid: pod.metadata.uid!, container: C }, T0 - 5000),
  });

  /** a leads (recording its pod), b follows a live holder. */
  async function setup() {
    const clock = new ManualClock(T0);
    const model = new ApiModel({ clock });
    const podA = await mkPod(model, 'ctl-a');
    const podB = await mkPod(model, 'ctl-b');
    const a: LeaderLeaseParams = { ...params('ctl-a'), self: self(podA) };
    const b: LeaderLeaseParams = { ...params('ctl-b'), self: self(podB) };
    expect((await leaseStep(model, a, clock.now())).outcome).toBe('leading');
    expect(await leaseStep(model, b, clock.now())).toMatchObject({
      outcome: 'following',
      holder: 'ctl-a',
      liveness: { state: 'alive' },
    });
    clock.advance(1000);
    return { clock, model, podA, podB, a, b };
  }
  const podKey = { namespace: 'sys', name: 'ctl-a' };

  it('the holder records its pod, UID and container incarnation on the Lease', async () => {
    const { model, podA } = await setup();
    const lease = model.getNow('Lease', { namespace: 'sys', name: 'claimkit-controller' });
    expect(lease.metadata.annotations).toEqual({
      'claimkit.dev/holder-identity': 'ctl-a',
      'claimkit.dev/holder-pod': 'sys/ctl-a',
      'claimkit.dev/holder-uid': podA.metadata.uid,
      'claimkit.dev/holder-container': 'controller',
      'claimkit.dev/holder-container-id': 'containerd://ctl-a-1',
      'claimkit.dev/holder-restart-count': '0',
    });
    expect(lease.spec.holderIdentity).toBe('ctl-a');
    expect(leaseHolderPod(lease)).toEqual({
      namespace: 'sys',
      name: 'ctl-a',
      uid: podA.metadata.uid,
      container: 'controller',
      containerID: 'containerd://ctl-a-1',
      restartCount: 0,
    });
  });

  const takesOver = async (model: ApiModel, b: LeaderLeaseParams, now: number, reason: string) => {
    const r = await leaseStep(model, b, now);
    expect(r).toMatchObject({
      outcome: 'leading',
      decision: { action: 'takeover', previousHolder: 'ctl-a', reason },
    });
    const lease = model.getNow('Lease', { namespace: 'sys', name: 'claimkit-controller' });
    expect(lease.spec.holderIdentity).toBe('ctl-b');
    expect(lease.spec.leaseTransitions).toBe(1);
    expect(leaseHolderPod(lease)).toMatchObject({ name: 'ctl-b', uid: b.self?.uid });
  };

  it('holder pod deleted: takeover in the next round, no lease wait', async () => {
    const { clock, model, b } = await setup();
    await model.delete('Pod', podKey, { gracePeriodSeconds: 0 });
    await takesOver(model, b, clock.now(), 'HolderGone');
  });

  it('holder pod recreated under the same name with another UID', async () => {
    const { clock, model, b } = await setup();
    await model.delete('Pod', podKey, { gracePeriodSeconds: 0 });
    await mkPod(model, 'ctl-a');
    await takesOver(model, b, clock.now(), 'HolderReplaced');
  });

  it('holder pod deleting (deletionTimestamp set)', async () => {
    const { clock, model, b } = await setup();
    expect((await model.delete('Pod', podKey))?.metadata.deletionTimestamp).toBeDefined();
    await takesOver(model, b, clock.now(), 'HolderTerminating');
  });

  it('holder pod Failed', async () => {
    const { clock, model, b } = await setup();
    model.setPodStatusNow(podKey, { ...running('containerd://ctl-a-1', 0), phase: 'Failed' });
    await takesOver(model, b, clock.now(), 'HolderFinished');
  });

  it('holder container terminated (the recorded one)', async () => {
    const { clock, model, b } = await setup();
    model.setPodStatusNow(podKey, {
      phase: 'Running',
      containerStatuses: [
        {
          name: C,
          containerID: 'containerd://ctl-a-1',
          restartCount: 0,
          state: { terminated: { exitCode: 137 } },
        },
      ],
    });
    await takesOver(model, b, clock.now(), 'HolderContainerTerminated');
  });

  it('holder container waiting to restart, the recorded one its last state', async () => {
    const { clock, model, b } = await setup();
    model.setPodStatusNow(podKey, {
      phase: 'Running',
      containerStatuses: [
        {
          name: C,
          restartCount: 0,
          state: { waiting: { reason: 'ContainerCreating' } },
          lastState: { terminated: { exitCode: 137, containerID: 'containerd://ctl-a-1' } },
        },
      ],
    });
    await takesOver(model, b, clock.now(), 'HolderContainerTerminated');
  });

  it('holder container restarted: another containerID and restartCount + 1', async () => {
    const { clock, model, b } = await setup();
    model.setPodStatusNow(podKey, running('containerd://ctl-a-2', 1, T0 + 500));
    await takesOver(model, b, clock.now(), 'HolderContainerRestarted');
  });

  it('holder container restarted: restartCount + 1 when only the count was recorded', async () => {
    const { clock, model, b } = await setup();
    const lease = model.getNow('Lease', { namespace: 'sys', name: 'claimkit-controller' });
    delete lease.metadata.annotations?.['claimkit.dev/holder-container-id'];
    await model.update(lease);
    model.setPodStatusNow(podKey, running('', 1, T0 + 500));
    await takesOver(model, b, clock.now(), 'HolderContainerRestarted');
  });

  it('liveness unknown (the pod read fails: 403, 503, timeout): no takeover until the lease expires', async () => {
    for (const reason of ['Forbidden', 'Unavailable', 'Timeout'] as const) {
      const { clock, model, b } = await setup();
      model.faults.inject({ verbs: ['get'], kinds: ['Pod'], reason });
      await model.delete('Pod', podKey, { gracePeriodSeconds: 0 }); // dead, but b cannot know
      const r = await leaseStep(model, b, clock.now());
      expect(r).toMatchObject({ outcome: 'following', holder: 'ctl-a', liveness: { state: 'unknown' } });
      clock.advance(13_999); // a renewed last at T0: 14.999 s
      expect((await leaseStep(model, b, clock.now())).outcome).toBe('following');
      clock.advance(1);
      await takesOver(model, b, clock.now(), 'LeaseExpired');
    }
  });

  it('a live holder is never taken over, while its container runs and it renews', async () => {
    const { clock, model, a, b } = await setup();
    for (let i = 0; i < 20; i++) {
      clock.advance(2000);
      if (i % 2 === 0) expect((await leaseStep(model, a, clock.now())).outcome).toBe('leading');
      // Status noise that is not a death: readiness flips, a newer status of the same container.
      model.setPodStatusNow(podKey, {
        ...running('containerd://ctl-a-1', 0),
        conditions: [{ type: 'Ready', status: i % 3 === 0 ? 'False' : 'True' }],
      });
      expect(await leaseStep(model, b, clock.now())).toMatchObject({
        outcome: 'following',
        liveness: { state: 'alive' },
      });
    }
    // A status without the container, or one that is neither running nor terminated: unknown, wait.
    model.setPodStatusNow(podKey, { phase: 'Running' });
    expect(await leaseStep(model, b, clock.now())).toMatchObject({
      outcome: 'following',
      liveness: { state: 'unknown' },
    });
  });

  it('two standbys racing for a dead holder: the update is fenced, exactly one wins', async () => {
    const { clock, model, b } = await setup();
    const podC = await mkPod(model, 'ctl-c');
    const c: LeaderLeaseParams = { ...params('ctl-c'), self: self(podC) };
    await model.delete('Pod', podKey, { gracePeriodSeconds: 0 });
    const [rb, rc] = await Promise.all([leaseStep(model, b, clock.now()), leaseStep(model, c, clock.now())]);
    const outcomes = [rb.outcome, rc.outcome].sort();
    expect(outcomes).toEqual(['leading', 'unknown']);
    expect([rb, rc].find((r) => r.outcome === 'unknown')?.error?.reason).toBe('Conflict');
    const winner = rb.outcome === 'leading' ? 'ctl-b' : 'ctl-c';
    const lease = model.getNow('Lease', { namespace: 'sys', name: 'claimkit-controller' });
    expect(lease.spec.holderIdentity).toBe(winner);
    expect(lease.spec.leaseTransitions).toBe(1);
    // The loser's next round follows the winner (alive), it does not take over again.
    const loser = winner === 'ctl-b' ? c : b;
    expect(await leaseStep(model, loser, clock.now())).toMatchObject({
      outcome: 'following',
      holder: winner,
      liveness: { state: 'alive' },
    });
  });

  it('no pod identity on the lease (an older version, or outside a pod): expiry as today', async () => {
    const clock = new ManualClock(T0);
    const model = new ApiModel({ clock });
    const podB = await mkPod(model, 'ctl-b');
    const b: LeaderLeaseParams = { ...params('ctl-b'), self: self(podB) };
    expect((await leaseStep(model, params('ctl-a'), clock.now())).outcome).toBe('leading');
    const lease = model.getNow('Lease', { namespace: 'sys', name: 'claimkit-controller' });
    expect(lease.metadata.annotations).toBeUndefined();
    clock.advance(14_999);
    const r = await leaseStep(model, b, clock.now());
    expect(r.outcome).toBe('following');
    expect(r.liveness).toBeUndefined();
    clock.advance(1);
    expect(await leaseStep(model, b, clock.now())).toMatchObject({
      outcome: 'leading',
      decision: { action: 'takeover', reason: 'LeaseExpired' },
    });
  });

  it('a record written for another identity is not trusted; a holder outside a pod clears the record', async () => {
    const { clock, model, b } = await setup();
    // An older version (no annotations code) takes over by expiry, keeping ctl-a's record beside
    // its own holderIdentity: ctl-a's pod being dead says nothing about the holder "old".
    clock.advance(15_000);
    const lease = model.getNow('Lease', { namespace: 'sys', name: 'claimkit-controller' });
    lease.spec = { ...lease.spec, holderIdentity: 'old', renewTime: toMicroTime(clock.now()) };
    await model.update(lease);
    await model.delete('Pod', podKey, { gracePeriodSeconds: 0 });
    const r = await leaseStep(model, b, clock.now());
    expect(r).toMatchObject({ outcome: 'following', holder: 'old' });
    expect(r.liveness).toBeUndefined();
    // A candidate outside a pod that acquires the lease leaves no record of an earlier holder.
    clock.advance(15_000);
    expect((await leaseStep(model, params('d'), clock.now())).outcome).toBe('leading');
    const after = model.getNow('Lease', { namespace: 'sys', name: 'claimkit-controller' });
    expect(after.metadata.annotations ?? {}).toEqual({});
  });

  it("the holder trusts its own pod's container status only when it started with this process", () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'sys', name: 'p', uid: 'u1' },
      spec: { containers: [] },
      status: running('containerd://x', 3, T0),
    } as Pod;
    expect(ownContainer(pod, { uid: 'u1', container: C }, T0 - 1000)).toEqual({
      containerID: 'containerd://x',
      restartCount: 3,
    });
    // A status from before a restart still shows the previous (running) container.
    expect(ownContainer(pod, { uid: 'u1', container: C }, T0 + 1000)).toEqual({});
    expect(ownContainer(pod, { uid: 'u2', container: C }, T0 - 1000)).toEqual({});
    expect(ownContainer(pod, { uid: 'u1', container: 'other' }, T0 - 1000)).toEqual({});
    expect(ownContainer(undefined, { uid: 'u1', container: C }, T0 - 1000)).toEqual({});
  });
});
