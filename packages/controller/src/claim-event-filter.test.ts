// --disable-claim-events' recorder over the kube recorder and core's in-memory API model, alone and
// under the Manager: the Normal Events about PodClaims are not written; Warnings and other kinds'
// Events are, and the Manager still counts every one.
import type { EventSpec, KubeEvent, PodClaim, PodPool } from '@claimkit/core';
import { ApiModel } from '@claimkit/core/model';
import { KubeEventRecorder } from '@claimkit/kube';
import { afterEach, describe, expect, it } from 'vitest';
import { isRoutineClaimEvent, withoutClaimEvents } from './claim-event-filter.ts';
import { Manager } from './manager.ts';
import { kubelet, model, running, stopRunning, testConfig, until } from './testing/loop-harness.ts';

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

describe('the Manager with disableClaimEvents, on the in-memory API model', () => {
  afterEach(stopRunning);
  const NS = 'ns1';
  const pool: PodPool = {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodPool',
    metadata: { name: 'web', namespace: NS },
    spec: {
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'main', image: 'web:1' }] },
      },
      minIdle: 1,
      maxPods: 5,
      releasePolicy: 'Recycle',
      drainSeconds: 0,
    },
  };
  const claim = (name: string, poolName = 'web'): PodClaim => ({
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodClaim',
    metadata: { name, namespace: NS },
    spec: { poolName },
  });
  const eventsAbout = (m: ApiModel, kind: string, name?: string) =>
    (m.listNow('Event', { namespace: NS }) as KubeEvent[]).filter(
      (e) => e.involvedObject.kind === kind && (name === undefined || e.involvedObject.name === name),
    );

  /** A Ready Idle pod first, so the claim binds at once; then the claim, bound; its Events written. */
  async function bindOne(disableClaimEvents: boolean) {
    const m = model();
    kubelet(m);
    const mgr = new Manager({
      config: testConfig({ disableClaimEvents }),
      client: m,
      source: m,
      recorder: new KubeEventRecorder(m, { component: 'claimkit-controller' }),
    });
    running.push(mgr);
    await mgr.start();
    await m.create(pool);
    await until('an Idle Ready pod', () =>
      m
        .listNow('Pod', { namespace: NS })
        .some((p) => p.metadata.labels?.['claimkit.dev/state'] === 'Idle' && p.status?.phase === 'Running'),
    );
    await m.create(claim('c1'));
    await until(
      'c1 bound',
      () => m.getNow('PodClaim', { namespace: NS, name: 'c1' }).status?.phase === 'Bound',
    );
    await mgr.flushEvents();
    return { m, mgr };
  }

  it('without it, a bind writes one Normal Bound Event on the claim', async () => {
    const { m, mgr } = await bindOne(false);
    const bound = eventsAbout(m, 'PodClaim', 'c1').filter((e) => e.reason === 'Bound');
    expect(bound).toHaveLength(1);
    expect(bound[0]).toMatchObject({ type: 'Normal', count: 1 });
    expect(mgr.metrics.events.total({ type: 'Normal', reason: 'Bound' })).toBe(1);
  });

  it('with it, a bind writes no Event; a claim’s Warning and the pool’s Events are still written, every Event still counted', async () => {
    const { m, mgr } = await bindOne(true);
    expect(eventsAbout(m, 'PodClaim')).toEqual([]);
    // Not written, still counted: claimkit_events_total is what the controller decided.
    expect(mgr.metrics.events.total({ type: 'Normal', reason: 'Bound' })).toBe(1);
    // The pool's own Events (ScaledUp) are another kind's: written.
    expect(eventsAbout(m, 'PodPool', 'web').map((e) => e.reason)).toContain('ScaledUp');
    // A problem with a claim is a Warning: written.
    await m.create(claim('lost', 'no-such-pool'));
    await until('the PoolNotFound Warning', () =>
      eventsAbout(m, 'PodClaim', 'lost').some((e) => e.type === 'Warning' && e.reason === 'PoolNotFound'),
    );
    // Deleting the bound claim (Finalized, Normal) writes nothing either.
    await m.delete('PodClaim', { namespace: NS, name: 'c1' });
    await until('c1 gone', () => !m.tryGetNow('PodClaim', { namespace: NS, name: 'c1' }));
    await mgr.flushEvents();
    expect(mgr.metrics.events.total({ type: 'Normal', reason: 'Finalized' })).toBe(1);
    expect(eventsAbout(m, 'PodClaim').filter((e) => e.type === 'Normal')).toEqual([]);
  });
});
