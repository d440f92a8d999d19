// Regression tests for seeds/capture-claim-dead-owner.md: each bug of that report is impossible here.
import { describe, expect, test } from 'vitest';
import { isApiError } from '../api/errors.ts';
import type { Capture } from '../api/types.ts';
import { decideCapture } from '../reconcile/capture/index.ts';
import { applySweep, observeForSweep, sweepCaptures } from '../reconcile/capture/sweep.ts';
import { capture, heldBy, pod, ready, T0_MS, withLabels, withSelector } from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { ClaimSuperseded, completeClaim, decideAcquire, failClaim, renewClaim } from './claim.ts';
import { acquireCapture, completeCapture } from './holder-ops.ts';

const worker = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, withLabels({ app: 'worker' }), ready(), ...mods);
const cap = (...mods: Parameters<typeof capture>[1][]) =>
  capture('snap', withSelector({ matchLabels: { app: 'worker' } }), ...mods);

describe('liveness decides takeover (pure)', () => {
  const a = worker('pod-a');
  const b = worker('pod-b');
  const held = cap(heldBy(a, { acquiredAt: 0 }));
  const now = T0_MS + 60_000; // one minute into a 3000 s lease: the claim is live

  test('a dead owner is taken over at once (no lease wait)', () => {
    const out = decideAcquire(held, { name: 'pod-b', uid: b.metadata.uid! }, { found: false }, now);
    expect(out.kind).toBe('tookOver');
    if (out.kind !== 'tookOver') return;
    expect(out.reason).toBe('HolderGone');
    expect(out.status.claim?.holder.name).toBe('pod-b');
    expect(out.status.claim?.token).toBe(2);
    expect(out.status.epoch).toBe(2);
  });

  test('terminating and finished owners are dead too', () => {
    const terminating = { ...a, metadata: { ...a.metadata, deletionTimestamp: '2026-01-01T00:00:30Z' } };
    const done = { ...a, status: { ...a.status, phase: 'Succeeded' as const } };
    const failedPod = { ...a, status: { ...a.status, phase: 'Failed' as const } };
    for (const [p, reason] of [
      [terminating, 'HolderTerminating'],
      [done, 'HolderFinished'],
      [failedPod, 'HolderFinished'],
    ] as const) {
      const out = decideAcquire(held, { name: 'pod-b', uid: b.metadata.uid! }, { found: true, pod: p }, now);
      expect(out).toMatchObject({ kind: 'tookOver', reason });
    }
  });

  test('a live owner keeps the claim', () => {
    const out = decideAcquire(held, { name: 'pod-b', uid: b.metadata.uid! }, { found: true, pod: a }, now);
    expect(out).toMatchObject({ kind: 'held', holder: { name: 'pod-a' }, liveness: { state: 'alive' } });
  });

  test('no liveness check (nil) keeps the claim', () => {
    const out = decideAcquire(held, { name: 'pod-b', uid: b.metadata.uid! }, undefined, now);
    expect(out).toMatchObject({ kind: 'held', liveness: { state: 'unknown' } });
  });

  test('an API error other than NotFound (unknown liveness) keeps the claim', () => {
    const out = decideAcquire(
      held,
      { name: 'pod-b', uid: b.metadata.uid! },
      { error: 'etcdserver: request timed out' },
      now,
    );
    expect(out).toMatchObject({ kind: 'held', liveness: { state: 'unknown' } });
  });

  test('same name with a new UID is not the owner: no re-entry, and the old owner counts as dead', () => {
    const replacement = worker('pod-a', (o) => {
      o.metadata.uid = 'a-new-uid';
    });
    const reenter = decideAcquire(
      held,
      { name: 'pod-a', uid: 'a-new-uid' },
      { found: true, pod: replacement },
      now,
    );
    expect(reenter.kind).toBe('tookOver');
    if (reenter.kind === 'tookOver') {
      expect(reenter.reason).toBe('HolderReplaced');
      expect(reenter.status.claim?.token).toBe(2);
    }
    const same = decideAcquire(held, { name: 'pod-a', uid: a.metadata.uid! }, { found: true, pod: a }, now);
    expect(same.kind).toBe('reentered');
  });

  test('an expired claim is taken over even from a live owner', () => {
    const later = T0_MS + 3001 * 1000;
    const out = decideAcquire(held, { name: 'pod-b', uid: b.metadata.uid! }, { found: true, pod: a }, later);
    expect(out).toMatchObject({ kind: 'tookOver', reason: 'LeaseExpired' });
  });

  test('the controller hands a dead holder claim to the next Ready pod on the pod event', () => {
    const d = decideCapture({ capture: held, pods: [b], holder: { found: false }, now });
    expect(d.writes).toHaveLength(1);
    const w = d.writes[0]!;
    expect(w.op).toBe('updateStatus');
    expect((w as { object: Capture }).object.status?.claim?.holder.name).toBe('pod-b');
    expect(d.events[0]?.reason).toBe('TakenOver');
  });
});

describe('fenced terminal writes', () => {
  const a = worker('pod-a');
  const status = cap(heldBy(a, { token: 7 })).status!;

  test('a superseded writer is rejected (pure)', () => {
    expect(() => completeClaim(status, 6, 'ref', T0_MS)).toThrow(ClaimSuperseded);
    expect(() => failClaim(status, 6, 'x', 3)).toThrow(ClaimSuperseded);
    expect(() => renewClaim(status, 6, T0_MS)).toThrow(ClaimSuperseded);
    expect(completeClaim(status, 7, 'ref', T0_MS).result).toMatchObject({
      ref: 'ref',
      token: 7,
      capturedFrom: { name: 'pod-a' },
    });
  });

  test('a superseded writer is rejected and writes nothing (through the API)', async () => {
    const { model, now, clock } = world();
    const podA = await put(model, worker('pod-a'));
    const podB = await put(model, worker('pod-b'));
    const c = await put(model, cap());
    const key = { namespace: c.metadata.namespace!, name: 'snap' };
    const first = await acquireCapture(model, key, { name: 'pod-a', uid: podA.metadata.uid! }, now);
    expect(first.outcome.kind).toBe('acquired');
    const oldToken = first.capture.status!.claim!.token;
    // pod-a dies; pod-b takes over at once.
    await model.delete('Pod', { namespace: key.namespace, name: 'pod-a' }, { gracePeriodSeconds: 0 });
    clock.advance(1000);
    const second = await acquireCapture(model, key, { name: 'pod-b', uid: podB.metadata.uid! }, now);
    expect(second.outcome.kind).toBe('tookOver');
    const before = model.getNow('Capture', key);
    const writesBefore = model.writes.length;
    await expect(completeCapture(model, key, oldToken, 'late-ref', now)).rejects.toBeInstanceOf(
      ClaimSuperseded,
    );
    expect(model.writes.length).toBe(writesBefore);
    expect(model.getNow('Capture', key)).toEqual(before);
  });

  test('a closed claim supersedes a late writer', async () => {
    const { model, now } = world();
    const podA = await put(model, worker('pod-a'));
    await put(model, cap());
    const key = { namespace: podA.metadata.namespace!, name: 'snap' };
    const got = await acquireCapture(model, key, { name: 'pod-a', uid: podA.metadata.uid! }, now);
    const token = got.capture.status!.claim!.token;
    await completeCapture(model, key, token, 'first', now);
    const done = model.getNow('Capture', key);
    expect(done.status?.phase).toBe('Captured');
    // The same holder retrying its completion (or any late writer) is superseded: the claim is closed.
    await expect(completeCapture(model, key, token, 'second', now)).rejects.toBeInstanceOf(ClaimSuperseded);
    expect(model.getNow('Capture', key).status?.result?.ref).toBe('first');
  });

  test('tokens strictly increase across acquisitions', async () => {
    const { model, now, clock } = world();
    const key = { namespace: 'default', name: 'snap' };
    await put(model, cap());
    const tokens: number[] = [];
    for (let i = 0; i < 4; i++) {
      const p = await put(model, worker(`w-${i}`));
      const r = await acquireCapture(model, key, { name: p.metadata.name, uid: p.metadata.uid! }, now);
      tokens.push(r.capture.status!.claim!.token);
      await model.delete('Pod', { namespace: 'default', name: p.metadata.name }, { gracePeriodSeconds: 0 });
      clock.advance(10);
    }
    expect(tokens).toEqual([1, 2, 3, 4]);
  });
});

describe('the recovery sweep', () => {
  test('leaves a live capture with a live holder alone', async () => {
    const { model, deps } = world();
    const a = await put(model, worker('pod-a'));
    await put(model, worker('pod-b'));
    await put(model, cap(heldBy(a, { token: 1 })));
    const before = model.getNow('Capture', { namespace: 'default', name: 'snap' });
    const report = await sweepCaptures(deps);
    expect(report).toMatchObject({ examined: 1, changed: [], stale: [] });
    expect(model.getNow('Capture', { namespace: 'default', name: 'snap' })).toEqual(before);
  });

  test('recovers over a dead owner', async () => {
    const { model, deps } = world();
    const a = await put(model, worker('pod-a'));
    await put(model, worker('pod-b'));
    await put(model, cap(heldBy(a, { token: 1 })));
    await model.delete('Pod', { namespace: 'default', name: 'pod-a' }, { gracePeriodSeconds: 0 });
    const report = await sweepCaptures(deps);
    expect(report.changed).toEqual(['default/snap']);
    const after = model.getNow('Capture', { namespace: 'default', name: 'snap' });
    expect(after.status?.claim).toMatchObject({ holder: { name: 'pod-b' }, token: 2 });
    expect(after.status?.takeovers).toBe(1);
  });

  test('does not write a stale observation', async () => {
    const { model, deps, clock } = world();
    const a = await put(model, worker('pod-a'));
    await put(model, worker('pod-b'));
    await put(model, cap(heldBy(a, { token: 1 })));
    await model.delete('Pod', { namespace: 'default', name: 'pod-a' }, { gracePeriodSeconds: 0 });
    const observed = await observeForSweep(deps);
    // Between the list and the write, pod-b acquires through the holder API.
    clock.advance(5);
    const b = model.getNow('Pod', { namespace: 'default', name: 'pod-b' });
    await acquireCapture(
      model,
      { namespace: 'default', name: 'snap' },
      { name: 'pod-b', uid: b.metadata.uid! },
      deps.now,
    );
    const current = model.getNow('Capture', { namespace: 'default', name: 'snap' });
    const report = await applySweep(deps, observed);
    expect(report.stale).toEqual(['default/snap']);
    expect(model.getNow('Capture', { namespace: 'default', name: 'snap' })).toEqual(current);
  });

  test('an unreachable API during the liveness check keeps the claim', async () => {
    const { model, deps } = world();
    const a = await put(model, worker('pod-a'));
    await put(model, worker('pod-b'));
    await put(model, cap(heldBy(a, { token: 1 })));
    model.faults.inject({ verbs: ['get'], kinds: ['Pod'], reason: 'Unavailable' });
    const report = await sweepCaptures(deps);
    expect(report.changed).toEqual([]);
    expect(model.getNow('Capture', { namespace: 'default', name: 'snap' }).status?.claim?.holder.name).toBe(
      'pod-a',
    );
  });

  test('errors from the model are typed', async () => {
    const { model } = world();
    await expect(model.get('Capture', { namespace: 'default', name: 'missing' })).rejects.toSatisfy(
      (e: unknown) => isApiError(e, 'NotFound'),
    );
  });
});
