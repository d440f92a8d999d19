import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors.ts';
import type { Lease } from '../api/types.ts';
import { ApiModel } from '../model/api-model.ts';
import { ManualClock } from '../model/clock.ts';
import {
  currentLeader,
  decideLease,
  type LeaderLeaseParams,
  leaseStep,
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
