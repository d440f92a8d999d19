// Every doctor check and every repair on the in-memory API model: build the pathology by direct
// writes, diagnose it, repair it, diagnose again (nothing left) and check the invariants.
import { describe, expect, test } from 'vitest';
import { ANNOTATION_MIGRATE, LABEL_CLAIMED_BY, LABEL_STATE } from '../api/constants.ts';
import type { AnyObject } from '../api/types.ts';
import { checkConvergence, checkSafety } from '../invariants/check.ts';
import { ApiModel } from '../model/api-model.ts';
import { ManualClock } from '../model/clock.ts';
import { schemaModelOptions } from '../schema/index.ts';
import {
  boundTo,
  capture,
  claimedBy,
  forPool,
  heldBy,
  idle,
  inPool,
  inSet,
  migratingFrom,
  notReady,
  onNode,
  pod,
  podClaim,
  podClaimSet,
  podPool,
  ready,
  refOf,
  running,
  T0_MS,
  withLease,
  withReleaseFinalizer,
  withReplicas,
  withSelector,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { type DoctorCode, diagnose } from './checks.ts';
import { planRepairs } from './repair.ts';
import { gatherDoctorSnapshot, runDoctor } from './run.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const MIN = 60_000;

function world() {
  const clock = new ManualClock(T0_MS);
  const model = new ApiModel({ ...schemaModelOptions(), clock });
  return { clock, model };
}

// Pool pods are Running but not Ready, so a Lost claim with an Idle pod around is not a P2 issue
// for the convergence check (no controller runs in these tests).
const poolPod = (name: string, ...mods: Parameters<typeof pod>[1][]) =>
  pod(name, inPool('web'), onNode('n1'), running(), notReady(), ...mods);

async function codes(model: ApiModel, clock: ManualClock, stuckAfterMs = MIN): Promise<DoctorCode[]> {
  const snap = await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() });
  return diagnose(snap, { stuckAfterMs }).map((f) => f.code);
}

async function fixAndVerify(model: ApiModel, clock: ManualClock, stuckAfterMs = MIN) {
  const run = await runDoctor(model, { namespace: NS, now: () => clock.now(), fix: true, stuckAfterMs });
  expect(run.remaining).toEqual([]);
  const state = {
    captures: model.listNow('Capture'),
    pods: model.listNow('Pod'),
    claims: model.listNow('PodClaim'),
  };
  expect(checkSafety(state)).toEqual([]);
  expect(checkConvergence(state, clock.now())).toEqual([]);
  return run;
}

async function putAll(model: ApiModel, ...objs: AnyObject[]) {
  for (const o of objs) await put(model, o);
}

describe('doctor', () => {
  test('a healthy namespace has no findings', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    const c = await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('web-1', 'n1')));
    await putAll(model, poolPod('web-1', claimedBy(c)), poolPod('web-2', idle()));
    await put(
      model,
      capture(
        'cap',
        withSelector({ app: 'db' }),
        heldBy(
          refOf(
            await put(
              model,
              pod('db-1', ready(), (p) => {
                p.metadata.labels = { app: 'db' };
              }),
            ),
          ),
        ),
      ),
    );
    // heldBy uses the fixture UID; re-point the holder to the stored pod's UID.
    const db1 = model.getNow('Pod', key('db-1'));
    const cap = model.getNow('Capture', key('cap'));
    await model.updateStatus({
      ...cap,
      status: {
        ...cap.status,
        claim: { ...cap.status!.claim!, holder: refOf(db1), renewTime: new Date(clock.now()).toISOString() },
      },
    });
    expect(await codes(model, clock)).toEqual([]);
    const run = await runDoctor(model, { namespace: NS, now: () => clock.now(), fix: true });
    expect(run.rounds).toEqual([]);
  });

  test('CK001 FinalizerStuck: the seed scale-in during a migration; finalize completes and the label goes', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    const set = await put(model, podClaimSet('cns', withReplicas(1)));
    const a = await put(
      model,
      podClaim(
        'claim-a',
        inSet(set),
        forPool('web'),
        withReleaseFinalizer(),
        boundTo('pod-2', 'n1'),
        migratingFrom('pod-1'),
      ),
    );
    const b = await put(
      model,
      podClaim('claim-b', inSet(set), forPool('web'), withReleaseFinalizer(), boundTo('pod-2', 'n1')),
    );
    await putAll(model, poolPod('pod-1', claimedBy(a)), poolPod('pod-2', claimedBy(a)));
    await model.delete('PodClaim', key('claim-a'));
    expect(await codes(model, clock)).not.toContain('CK001'); // not stuck yet
    clock.advance(2 * MIN);
    const found = await codes(model, clock);
    expect(found).toContain('CK001');
    await fixAndVerify(model, clock);
    expect(model.tryGetNow('PodClaim', key('claim-a'))).toBeUndefined();
    const pod2 = model.getNow('Pod', key('pod-2'));
    expect(pod2.metadata.labels?.[LABEL_CLAIMED_BY]).toBe(b.metadata.name); // relabelled in a later round
    expect(model.getNow('Pod', key('pod-1')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
    expect(model.getNow('PodClaim', key('claim-b')).spec.podName).toBe('pod-2');
  });

  test('CK002 BoundToMissingPod: cleared and Lost', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('cn-zkskr', 'n1')));
    expect(await codes(model, clock)).toEqual(['CK002']);
    await fixAndVerify(model, clock);
    const c = model.getNow('PodClaim', key('a'));
    expect(c.spec.podName ?? '').toBe('');
    expect(c.spec.nodeName ?? '').toBe('');
    expect(c.status?.phase).toBe('Lost');
  });

  test('CK003 LabelNamesMissingClaim: the residue label goes, the pod returns to Idle', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('cn-n6zb9', claimedBy('mxxhz')));
    expect(await codes(model, clock)).toEqual(['CK003']);
    await fixAndVerify(model, clock);
    const p = model.getNow('Pod', key('cn-n6zb9'));
    expect(p.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    expect(p.metadata.labels?.[LABEL_STATE]).toBe('Idle');
  });

  test('CK003 with a same-named successor claim: unlabel, then label for the claim that references it', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('web-1', claimedBy('a'))); // fixture UID, not the stored claim's
    await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('web-1', 'n1')));
    expect(await codes(model, clock)).toEqual(['CK003']);
    const run = await fixAndVerify(model, clock);
    expect(run.rounds.length).toBe(2);
    const p = model.getNow('Pod', key('web-1'));
    expect(p.metadata.annotations?.['claimkit.dev/claimed-by-uid']).toBe(
      model.getNow('PodClaim', key('a')).metadata.uid,
    );
  });

  test('CK004 LabelNotReferenced: a stray pod labelled for a claim bound elsewhere is released', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    const c = await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('web-1', 'n1')));
    await putAll(model, poolPod('web-1', claimedBy(c)), poolPod('web-2', claimedBy(c)));
    expect(await codes(model, clock)).toEqual(['CK004']);
    await fixAndVerify(model, clock);
    expect(model.getNow('Pod', key('web-2')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
    expect(model.getNow('Pod', key('web-1')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('a');
  });

  test('CK004 where another claim references the pod: only the label goes (never A->B in one write)', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    const a = await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('web-1', 'n1')));
    await put(model, podClaim('b', forPool('web'), withReleaseFinalizer(), boundTo('web-2', 'n1')));
    await putAll(model, poolPod('web-1', claimedBy(a)), poolPod('web-2', claimedBy(a)));
    expect(await codes(model, clock)).toEqual(['CK004']);
    const plan = planRepairs(
      await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() }),
      diagnose(await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() })),
    );
    const patch = plan.repairs[0]!.decision.writes[0]!;
    expect(patch).toMatchObject({
      op: 'patch',
      patch: { metadata: { labels: { [LABEL_CLAIMED_BY]: null } } },
    });
    await fixAndVerify(model, clock);
    expect(model.getNow('Pod', key('web-2')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('b');
  });

  test('CK005 PodReferencedTwice: the labelled claim keeps the pod, the other is Lost', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(
      model,
      podClaim('sys-hpjqv', forPool('web'), withReleaseFinalizer(), boundTo('cn-n6zb9', 'n1')),
    );
    const m = await put(
      model,
      podClaim('mxxhz', forPool('web'), withReleaseFinalizer(), boundTo('cn-n6zb9', 'n1')),
    );
    await put(model, poolPod('cn-n6zb9', claimedBy(m)));
    expect(await codes(model, clock)).toEqual(['CK005']);
    await fixAndVerify(model, clock);
    expect(model.getNow('PodClaim', key('mxxhz')).spec.podName).toBe('cn-n6zb9');
    const other = model.getNow('PodClaim', key('sys-hpjqv'));
    expect(other.spec.podName ?? '').toBe('');
    expect(other.status?.phase).toBe('Lost');
  });

  test('CK006 CaptureHolderDead: a Ready candidate takes over with a higher token', async () => {
    const { model, clock } = world();
    const dead = pod('cap-0', ready(), (p) => {
      p.metadata.labels = { app: 'db' };
    });
    await put(
      model,
      capture('cap', withSelector({ app: 'db' }), withLease(3000), heldBy(refOf(dead), { token: 3 })),
    );
    await put(
      model,
      pod('cap-1', ready(), (p) => {
        p.metadata.labels = { app: 'db' };
      }),
    );
    const cap = model.getNow('Capture', key('cap'));
    await model.updateStatus({
      ...cap,
      status: {
        ...cap.status,
        claim: { ...cap.status!.claim!, renewTime: new Date(clock.now()).toISOString() },
      },
    });
    expect(await codes(model, clock)).toEqual(['CK006']);
    await fixAndVerify(model, clock);
    const after = model.getNow('Capture', key('cap')).status!;
    expect(after.claim?.holder.name).toBe('cap-1');
    expect(after.claim?.token).toBeGreaterThan(3);
  });

  test('CK007 CaptureLeaseExpired: with no Ready candidate the claim is closed', async () => {
    const { model, clock } = world();
    const holder = await put(
      model,
      pod('cap-0', running(), notReady(), (p) => {
        p.metadata.labels = { app: 'db' };
      }),
    );
    await put(model, capture('cap', withSelector({ app: 'db' }), withLease(60), heldBy(refOf(holder))));
    const cap = model.getNow('Capture', key('cap'));
    await model.updateStatus({
      ...cap,
      status: {
        ...cap.status,
        claim: {
          ...cap.status!.claim!,
          holder: refOf(holder),
          renewTime: new Date(clock.now()).toISOString(),
        },
      },
    });
    clock.advance(2 * MIN);
    expect(await codes(model, clock)).toEqual(['CK007']);
    await fixAndVerify(model, clock);
    const after = model.getNow('Capture', key('cap')).status!;
    expect(after.claim).toBeUndefined();
    expect(after.phase).toBe('Pending');
  });

  test('CK008 MigrationStuck and CK009 ScaleInBlocked: finishing the migration unblocks scale-in', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    const set = await put(model, podClaimSet('cns', withReplicas(0)));
    const a = await put(
      model,
      podClaim(
        'a',
        inSet(set),
        withReleaseFinalizer(),
        boundTo('web-2', 'n1'),
        migratingFrom('web-1'),
        (c) => {
          c.metadata.annotations = { [ANNOTATION_MIGRATE]: 'consolidate' };
        },
      ),
    );
    await putAll(model, poolPod('web-1', claimedBy(a)), poolPod('web-2', claimedBy(a)));
    expect(await codes(model, clock)).toEqual(['CK009']); // the migration is young, scale-in is blocked
    clock.advance(2 * MIN);
    expect(await codes(model, clock)).toEqual(['CK008', 'CK009']);
    await fixAndVerify(model, clock);
    const c = model.getNow('PodClaim', key('a'));
    expect(c.spec.sourcePod ?? '').toBe('');
    expect(c.metadata.annotations?.[ANNOTATION_MIGRATE]).toBeUndefined();
    expect(c.status?.phase).toBe('Bound');
    expect(model.getNow('Pod', key('web-1')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
  });

  test('CK010 ReferencedPodUnlabelled: labelled for the claim that references it', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('web-1', 'n1')));
    await put(model, poolPod('web-1', idle()));
    expect(await codes(model, clock)).toEqual(['CK010']);
    await fixAndVerify(model, clock);
    expect(model.getNow('Pod', key('web-1')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('a');
  });

  test('--dry-run plans the writes and changes nothing', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('gone', 'n1')));
    await put(model, poolPod('web-1', claimedBy('missing')));
    const before = model.writes.length;
    const run = await runDoctor(model, { namespace: NS, now: () => clock.now(), fix: true, dryRun: true });
    expect(model.writes.length).toBe(before);
    expect(run.rounds.length).toBe(1);
    expect(run.rounds[0]!.map((r) => r.finding.code)).toEqual(['CK002', 'CK003']);
    expect(
      run.rounds[0]!.flatMap((r) => r.writes).every(
        (w) => w.op === 'patchStatus' || 'precondition' in w || w.op === 'update',
      ),
    ).toBe(true);
  });

  test('a repair planned from a stale snapshot fails with Conflict and writes nothing', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('web-1', claimedBy('missing')));
    const snap = await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() });
    const plan = planRepairs(snap, diagnose(snap));
    await model.patch('Pod', key('web-1'), { metadata: { labels: { touched: 'yes' } } });
    const { applyDecision } = await import('../reconcile/apply.ts');
    const res = await applyDecision(model, plan.repairs[0]!.decision);
    expect(res.failed?.error.reason).toBe('Conflict');
    expect(model.getNow('Pod', key('web-1')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('missing');
  });
});
