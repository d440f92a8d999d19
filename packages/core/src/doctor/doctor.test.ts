// Every doctor check and every repair on the in-memory API model: build the pathology by direct
// writes, diagnose it, repair it, diagnose again (nothing left) and check the invariants.
import { describe, expect, test } from 'vitest';
import { ANNOTATION_MIGRATE, LABEL_CLAIMED_BY, LABEL_STATE } from '../api/constants.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Client } from '../api/ports.ts';
import type { AnyObject } from '../api/types.ts';
import { acquireCapture } from '../capture/holder-ops.ts';
import { checkConvergence, checkSafety } from '../invariants/check.ts';
import type { ApiModel } from '../model/api-model.ts';
import type { ManualClock } from '../model/clock.ts';
import {
  boundTo,
  capture,
  captured,
  captureStatus,
  claimedBy,
  createdAt,
  draining,
  failed,
  forPool,
  heldBy,
  idle,
  inNamespace,
  inPool,
  inSet,
  type Mod,
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
  withLabels,
  withLease,
  withMaxPods,
  withMinIdle,
  withoutTemplateHash,
  withReleaseFinalizer,
  withReleasePolicy,
  withReplicas,
  withSelector,
  withState,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import {
  byNamespace,
  CHECKS,
  type DoctorCode,
  type DoctorSnapshot,
  diagnose,
  type Finding,
  objectId,
} from './checks.ts';
import { OVER_CREATED_GRACE_MS } from './pool-size.ts';
import { planRepairs } from './repair.ts';
import { gatherDoctorSnapshot, runDoctor } from './run.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const MIN = 60_000;

/**
 * A model without the CRDs' rules for claims and captures: what a cluster without them (or a
 * writer from before them) lets in. Pathologies the rules refuse are forced here.
 */
const worldWithoutRules = () => world({ withoutRules: ['PodClaim', 'Capture'] });

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

describe('doctor, one namespace at a time', () => {
  test('the parts of a snapshot by namespace find what the whole does, with the same names in each', () => {
    const inA = inNamespace('a') as Mod<AnyObject>;
    const inB = inNamespace('b') as Mod<AnyObject>;
    const old = createdAt(0) as Mod<AnyObject>;
    const claimX = podClaim('x', forPool('web'), boundTo('p', 'n1'), inA);
    const snap = {
      captures: [],
      claimSets: [],
      // a: x is bound to p, which lives in b only (CK002 in a); b: p is labelled for an x b has not (CK003).
      claims: [claimX],
      // Both pools hold at most 1 pod; a has 2 settled pods (over-created), b has 1.
      pools: [podPool('web', withMaxPods(1), inA), podPool('web', withMaxPods(1), inB)],
      pods: [
        poolPod('p', claimedBy(podClaim('x', inB)), inB, old),
        poolPod('q', idle(), inA, old),
        poolPod('r', idle(), inA, old),
      ],
      now: T0_MS + 10 * MIN,
    } as DoctorSnapshot;
    const sorted = (fs: Finding[]) => fs.map((f) => `${f.namespace} ${f.code} ${f.message}`).sort();
    const whole = sorted(diagnose(snap));
    const parts = byNamespace(snap);
    expect(parts.map((p) => p.pods.length).sort()).toEqual([1, 2]);
    expect(sorted(parts.flatMap((p) => diagnose(p)))).toEqual(whole);
    expect(whole.map((f) => f.split(' ').slice(0, 2).join(' '))).toEqual(
      expect.arrayContaining(['a CK002', 'b CK003']),
    );
  });
});

describe('doctor', () => {
  test('CK015 (info): an outdated Bound pod waits for its release; Idle and current pods are not reported', async () => {
    const { model, clock } = world();
    const c = await put(
      model,
      podClaim('c1', forPool('web'), withReleaseFinalizer(), boundTo('web-old', 'n1')),
    );
    await putAll(
      model,
      podPool('web'),
      poolPod('web-old', claimedBy(c), withoutTemplateHash),
      poolPod('web-idle-old', idle(), withoutTemplateHash),
      poolPod('web-new', idle()),
    );
    const snap = await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() });
    const found = diagnose(snap, { stuckAfterMs: MIN });
    expect(found.map((f) => [f.code, f.severity, f.objects])).toEqual([
      ['CK015', 'Info', [`Pod/${NS}/web-old`, `PodPool/${NS}/web`, `PodClaim/${NS}/c1`]],
    ]);
    expect(found[0]!.message).toMatch(/deleted, not recycled, when claim c1 releases it/);
    // Nothing to fix: --fix plans no write for it.
    expect(planRepairs(snap, found).repairs).toEqual([]);
  });

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
    expect(model.getNow('PodClaim', key('claim-b')).status?.podName).toBe('pod-2');
  });

  test('CK002 BoundToMissingPod: cleared and Lost', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('cn-zkskr', 'n1')));
    expect(await codes(model, clock)).toEqual(['CK002']);
    await fixAndVerify(model, clock);
    const c = model.getNow('PodClaim', key('a'));
    expect(c.status?.podName ?? '').toBe('');
    expect(c.status?.nodeName ?? '').toBe('');
    expect(c.status?.phase).toBe('Lost');
  });

  test('CK002 BoundToMissingPod also for a finished pod: the claim is Lost, the pod deleted (not recycled)', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    const c = await put(
      model,
      podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('cn-done', 'n1')),
    );
    await put(model, poolPod('cn-done', claimedBy(c), failed()));
    expect(await codes(model, clock)).toEqual(['CK002']);
    await fixAndVerify(model, clock);
    const after = model.getNow('PodClaim', key('a'));
    expect(after.status?.podName ?? '').toBe('');
    expect(after.status?.phase).toBe('Lost');
    const pod = model.tryGetNow('Pod', key('cn-done'));
    expect(pod === undefined || pod.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(pod?.metadata.labels?.[LABEL_STATE]).not.toBe('Idle');
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
    expect(model.getNow('PodClaim', key('mxxhz')).status?.podName).toBe('cn-n6zb9');
    const other = model.getNow('PodClaim', key('sys-hpjqv'));
    expect(other.status?.podName ?? '').toBe('');
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
    expect(c.status?.sourcePod ?? '').toBe('');
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

  test('CK011 LeakedPod: a Bound pod no claim references goes back to Idle (Recycle); held pods are left alone', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    // The seed-B leftover: claim A is gone, B was bound elsewhere, X stays Bound with no label.
    await put(model, poolPod('x', withState('Bound')));
    // Near misses: a claim's own pod, and a migrating claim's Draining source and its target.
    const b = await put(model, podClaim('b', forPool('web'), withReleaseFinalizer(), boundTo('y', 'n1')));
    const m = await put(
      model,
      podClaim('m', forPool('web'), withReleaseFinalizer(), boundTo('m-new', 'n1'), migratingFrom('m-old')),
    );
    await putAll(
      model,
      poolPod('y', claimedBy(b)),
      poolPod('m-old', claimedBy(m), draining()),
      poolPod('m-new', claimedBy(m)),
      poolPod('idle-1', idle()),
      // Not a pool pod: its labels are none of the pool's business.
      pod('other', onNode('n1'), running(), notReady(), withState('Bound')),
    );
    expect(await codes(model, clock)).toEqual(['CK011']);
    const snap = await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() });
    expect(diagnose(snap)[0]).toMatchObject({ name: 'LeakedPod', objects: [`Pod/${NS}/x`], fixable: true });
    await fixAndVerify(model, clock);
    expect(model.getNow('Pod', key('x')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
    expect(model.getNow('Pod', key('y')).metadata.labels).toMatchObject({
      [LABEL_STATE]: 'Bound',
      [LABEL_CLAIMED_BY]: 'b',
    });
    expect(model.getNow('Pod', key('m-old')).metadata.labels).toMatchObject({
      [LABEL_STATE]: 'Draining',
      [LABEL_CLAIMED_BY]: 'm',
    });
    expect(await codes(model, clock)).toEqual([]);
  });

  test('CK011 with releasePolicy Delete: a leaked Draining pod is deleted', async () => {
    const { model, clock } = world();
    await put(model, podPool('web', withReleasePolicy('Delete')));
    await put(model, poolPod('x', draining()));
    expect(await codes(model, clock)).toEqual(['CK011']);
    await fixAndVerify(model, clock);
    expect(model.getNow('Pod', key('x')).metadata.deletionTimestamp).toBeTruthy();
  });

  test('CK011 is not reported for a pod a deleting claim still references: its finalizer releases it (CK001 once stuck)', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, podClaim('d', forPool('web'), withReleaseFinalizer(), boundTo('x', 'n1')));
    await put(model, poolPod('x', withState('Bound')));
    await model.delete('PodClaim', key('d'));
    expect(await codes(model, clock)).toEqual([]);
    clock.advance(2 * MIN);
    expect(await codes(model, clock)).toEqual(['CK001']);
    await fixAndVerify(model, clock);
    expect(model.getNow('Pod', key('x')).metadata.labels?.[LABEL_STATE]).toBe('Idle');
  });

  test('CK011 --fix reads the pod and then the claims live: a claim that took the pod after the check keeps it', async () => {
    const { model, clock } = world();
    await put(model, podPool('web'));
    await put(model, poolPod('x', withState('Bound')));
    await put(model, podClaim('b', forPool('web'), withReleaseFinalizer()));
    // Between doctor's snapshot and its write, a writer points claim b at x (the pod is untouched,
    // so the release's resourceVersion precondition alone would not stop it).
    let raced = false;
    const client = interceptPodReads(model, async () => {
      if (raced) return;
      raced = true;
      const c = model.getNow('PodClaim', key('b'));
      await model.updateStatus({ ...c, status: { ...c.status, podName: 'x', nodeName: 'n1' } });
    });
    const run = await runDoctor(client, { namespace: NS, now: () => clock.now(), fix: true });
    expect(run.findings.map((f) => f.code)).toEqual(['CK011']);
    expect(run.rounds[0]![0]!.applied).toBe(0);
    expect(run.rounds[0]![0]!.failed?.error.message).toMatch(/no longer shows CK011/);
    expect(model.getNow('Pod', key('x')).metadata.labels?.[LABEL_STATE]).toBe('Bound');
    // What is left is b's unlabelled pod, which the next run labels for b.
    expect(run.remaining.map((f) => f.code)).toEqual(['CK010']);
    await fixAndVerify(model, clock);
    expect(model.getNow('Pod', key('x')).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('b');
  });

  test('CK012 SelfMigration: reported at once; --fix clears sourcePod only and the pod stays Bound and labelled', async () => {
    // The CRD rule refuses sourcePod == podName ...
    const withRules = world();
    await put(withRules.model, podPool('web'));
    const ok = await put(withRules.model, podClaim('a', forPool('web'), boundTo('web-1', 'n1')));
    await expect(
      withRules.model.updateStatus({ ...ok, status: { ...ok.status, sourcePod: 'web-1' } }),
    ).rejects.toMatchObject({ reason: 'Invalid' });
    // ... a cluster without it (or a legacy writer) lets it in.
    const { model, clock } = worldWithoutRules();
    await put(model, podPool('web'));
    const a = await put(
      model,
      podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('web-1', 'n1'), migratingFrom('web-1')),
    );
    await put(model, poolPod('web-1', claimedBy(a)));
    const podBefore = model.getNow('Pod', key('web-1'));
    expect(await codes(model, clock)).toEqual(['CK012']); // at once, not after --stuck-after
    expect(await codes(model, clock, 0)).toEqual(['CK012']); // and never as CK008
    await fixAndVerify(model, clock);
    const c = model.getNow('PodClaim', key('a'));
    expect(c.status?.sourcePod ?? '').toBe('');
    expect(c.status?.podName).toBe('web-1');
    expect(c.status?.phase).toBe('Bound');
    const podAfter = model.getNow('Pod', key('web-1'));
    expect(podAfter.metadata.resourceVersion).toBe(podBefore.metadata.resourceVersion); // not written at all
    expect(podAfter.metadata.labels).toMatchObject({ [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'a' });
  });

  test("CK008's repair never releases the claim's own pod when sourcePod == podName", async () => {
    const { model, clock } = worldWithoutRules();
    await put(model, podPool('web'));
    const a = await put(
      model,
      podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('web-1', 'n1'), migratingFrom('web-1')),
    );
    await put(model, poolPod('web-1', claimedBy(a)));
    const snap = await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() });
    const forged: Finding = {
      code: 'CK008',
      name: CHECKS.CK008.name,
      namespace: NS,
      message: 'stuck',
      objects: [objectId('PodClaim', a), `Pod/${NS}/web-1`],
      fixable: true,
      severity: 'Error',
    };
    const plan = planRepairs(snap, [forged]);
    expect(plan.repairs).toHaveLength(1);
    expect(plan.repairs[0]!.touches).toEqual([`PodClaim/${NS}/a`]);
  });

  test('CK013 UnfencedResult: the stale-token result of issue 10 is discarded; the capture runs again above every token', async () => {
    const { model, clock } = worldWithoutRules();
    const candidate = await put(model, pod('db-1', ready(), withLabels({ app: 'db' })));
    // `kubectl patch --subresource=status` wrote result.token 1 while the epoch was 5, claim closed.
    await put(
      model,
      capture(
        'fn-v1',
        withSelector({ app: 'db' }),
        captureStatus({ epoch: 5 }),
        captured('snap://stale', { token: 1 }),
      ),
    );
    expect(model.getNow('Capture', key('fn-v1')).status).toMatchObject({ phase: 'Captured', epoch: 5 });
    const snap = await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() });
    expect(diagnose(snap)).toMatchObject([
      { code: 'CK013', name: 'UnfencedResult', objects: [`Capture/${NS}/fn-v1`, `Pod/${NS}/pod`] },
    ]);
    expect(diagnose(snap)[0]!.message).toMatch(/result token 1 is older than epoch 5/);
    await fixAndVerify(model, clock);
    const after = model.getNow('Capture', key('fn-v1')).status!;
    expect(after.result).toBeUndefined();
    expect(after).toMatchObject({ phase: 'Pending', epoch: 5 });
    expect(after.lastError).toMatch(/claimctl doctor discarded unfenced result snap:\/\/stale \(token 1\)/);
    const { capture: again } = await acquireCapture(model, key('fn-v1'), refOf(candidate), () => clock.now());
    expect(again.status?.claim?.token).toBe(6);
  });

  test('CK013: a token never issued, and a result beside an open claim (the claim is kept)', async () => {
    const { model, clock } = worldWithoutRules();
    const holder = await put(model, pod('db-1', ready(), withLabels({ app: 'db' })));
    await put(
      model,
      capture(
        'ahead',
        withSelector({ app: 'db' }),
        captured('snap://ahead', { token: 3 }),
        captureStatus({ epoch: 2 }),
      ),
    );
    const open = capture('open', withSelector({ app: 'db' }), heldBy(refOf(holder), { token: 4 }));
    open.status!.result = {
      ref: 'snap://early',
      token: 4,
      capturedFrom: refOf(holder),
      completionTime: new Date(T0_MS).toISOString(),
    };
    await put(model, open);
    const found = diagnose(await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() }));
    expect(found.map((f) => [f.code, f.objects[0]])).toEqual([
      ['CK013', `Capture/${NS}/ahead`],
      ['CK013', `Capture/${NS}/open`],
    ]);
    expect(found[0]!.message).toMatch(/result token 3 was never issued \(epoch 2\)/);
    expect(found[1]!.message).toMatch(/while the claim of db-1 \(token 4\) is open/);
    await fixAndVerify(model, clock);
    expect(model.getNow('Capture', key('ahead')).status).toMatchObject({ phase: 'Pending', epoch: 2 });
    const kept = model.getNow('Capture', key('open')).status!;
    expect(kept.result).toBeUndefined();
    expect(kept).toMatchObject({
      phase: 'Capturing',
      epoch: 4,
      claim: { token: 4, holder: { name: 'db-1' } },
    });
  });

  test('CK013 is not reported for a result written by the fenced complete', async () => {
    const { model, clock } = worldWithoutRules();
    const holder = await put(model, pod('db-1', ready(), withLabels({ app: 'db' })));
    await put(model, capture('done', withSelector({ app: 'db' }), captureStatus({ epoch: 2 })));
    const { acquireCapture: acquire, completeCapture } = await import('../capture/holder-ops.ts');
    const { capture: held } = await acquire(model, key('done'), refOf(holder), () => clock.now());
    await completeCapture(model, key('done'), held.status!.claim!.token, 'snap://ok', () => clock.now());
    expect(model.getNow('Capture', key('done')).status).toMatchObject({
      phase: 'Captured',
      epoch: 3,
      result: { token: 3 },
    });
    await put(
      model,
      capture('fixture', withSelector({ app: 'db' }), captureStatus({ epoch: 7 }), captured('snap://7')),
    );
    expect(await codes(model, clock)).toEqual([]);
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

/** The model as a Client whose pod reads first run `beforePodRead` (another writer acting meanwhile). */
function interceptPodReads(model: ApiModel, beforePodRead: (key: ObjectKey) => Promise<void>): Client {
  return {
    get: (async (kind: 'Pod', k: ObjectKey) => {
      if (kind === 'Pod') await beforePodRead(k);
      return model.get(kind, k);
    }) as Client['get'],
    list: model.list.bind(model),
    create: model.create.bind(model),
    update: model.update.bind(model),
    patch: model.patch.bind(model),
    delete: model.delete.bind(model),
    updateStatus: model.updateStatus.bind(model),
    patchStatus: model.patchStatus.bind(model),
  };
}

describe('CK014 PoolOverCreated', () => {
  const at = (ms: number) => (p: { metadata: { creationTimestamp?: string } }) => {
    p.metadata.creationTimestamp = new Date(ms).toISOString();
  };

  test('more pods than maxPods (terminating ones included) once they are older than the grace', async () => {
    const { model, clock } = world();
    await put(model, podPool('web', withMinIdle(0), withMaxPods(2)));
    const c = await put(model, podClaim('a', forPool('web'), withReleaseFinalizer(), boundTo('web-1', 'n1')));
    await putAll(
      model,
      poolPod('web-1', claimedBy(c)),
      poolPod('web-2', claimedBy('b')),
      poolPod('web-3', idle()),
    );
    // Just created: may be a create the controller is about to see and undo.
    expect(await codes(model, clock)).not.toContain('CK014');
    clock.advance(OVER_CREATED_GRACE_MS);
    const snap = await gatherDoctorSnapshot(model, { namespace: NS, now: clock.now() });
    const f = diagnose(snap).find((x) => x.code === 'CK014');
    expect(f).toMatchObject({
      name: 'PoolOverCreated',
      fixable: false,
      objects: expect.arrayContaining([`PodPool/${NS}/web`]),
    });
    expect(f?.message).toMatch(/3 pods .* more than maxPods 2/);
  });

  test('Idle above the target only when the pool status agrees (the controller saw it and did not act)', async () => {
    const { model, clock } = world();
    await put(model, podPool('web', withMinIdle(1), withMaxPods(10)));
    await putAll(model, ...['w1', 'w2', 'w3'].map((n) => poolPod(n, idle(), at(T0_MS))));
    clock.advance(OVER_CREATED_GRACE_MS);
    expect(await codes(model, clock)).not.toContain('CK014');
    await model.patchStatus('PodPool', key('web'), { status: { idle: 3, total: 3 } });
    expect(await codes(model, clock)).toContain('CK014');
    // A Pending claim raises the target: two Idle pods above minIdle 1 are still one too many.
    await put(model, podClaim('p', forPool('web')));
    expect(await codes(model, clock)).toContain('CK014');
    await put(model, podClaim('q', forPool('web')));
    expect(await codes(model, clock)).not.toContain('CK014');
  });
});
