// --disable-claim-events' recorder over the kube recorder and core's in-memory API model: the
// routine Normal Events about PodClaims are not written; Warnings and other kinds' Events are.
import type { EventSpec, KubeEvent } from '@claimkit/core';
import { ApiModel } from '@claimkit/core/model';
import { KubeEventRecorder } from '@claimkit/kube';
import { describe, expect, it } from 'vitest';
import { isRoutineClaimEvent, withoutClaimEvents } from './claim-event-filter.ts';

const ev = (kind: EventSpec['regarding']['kind'], type: EventSpec['type'], reason: string): EventSpec => ({
  regarding: { kind, namespace: 'ns', name: `${kind.toLowerCase()}-1`, uid: `${kind}-uid` },
  type,
  reason,
  message: `${reason} message`,
});

// What core's reconcilers record today (grep `event(` in packages/core/src/reconcile).
const dropped = ['Pending', 'Bound', 'NoReadyPod', 'Finalized', 'MigrationStarted', 'Migrated'].map((r) =>
  ev('PodClaim', 'Normal', r),
);
const kept = [
  ev('PodClaim', 'Warning', 'Lost'),
  ev('PodClaim', 'Warning', 'PoolNotFound'),
  ev('PodClaim', 'Warning', 'PoolAtMaxPods'),
  ev('PodClaim', 'Warning', 'MigrationPending'),
  ev('PodClaim', 'Warning', 'ForeignLabelRemoved'),
  ev('PodPool', 'Normal', 'ScaledUp'),
  ev('PodPool', 'Warning', 'DisruptionBudgetConflict'),
  ev('PodClaimSet', 'Normal', 'ClaimCreated'),
  ev('Capture', 'Normal', 'Acquired'),
  ev('Capture', 'Warning', 'ResultDiscarded'),
  ev('Pod', 'Warning', 'ForeignLabelRemoved'),
];

describe('withoutClaimEvents (--disable-claim-events)', () => {
  it('writes no Normal Event about a PodClaim, and every Warning and every other kind’s Event', async () => {
    const model = new ApiModel();
    const rec = withoutClaimEvents(new KubeEventRecorder(model, { component: 'claimkit-controller' }));
    for (const e of [...dropped, ...kept]) await rec.record(e);
    const written = (model.listNow('Event') as KubeEvent[]).map((e) => [
      e.involvedObject.kind,
      e.type,
      e.reason,
    ]);
    expect(written.sort()).toEqual(kept.map((e) => [e.regarding.kind, e.type, e.reason]).sort());
  });

  it('is the predicate the recorder applies: Normal and about a PodClaim', () => {
    expect(dropped.every(isRoutineClaimEvent)).toBe(true);
    expect(kept.some(isRoutineClaimEvent)).toBe(false);
  });

  it('repeats of a kept Event are still aggregated by the recorder underneath', async () => {
    const model = new ApiModel();
    const rec = withoutClaimEvents(new KubeEventRecorder(model, { component: 'claimkit-controller' }));
    const lost = ev('PodClaim', 'Warning', 'Lost');
    for (let i = 0; i < 3; i++) await rec.record(lost);
    expect((model.listNow('Event') as KubeEvent[]).map((e) => e.count)).toEqual([3]);
  });
});
