// Seed B (seeds/pool-claim-finalize-scale-in.md) on the real control plane, controller in process:
// a claim set of 2 with a migration in progress is scaled in to 1 (the migrating claim is not
// chosen); the two-claims-one-pod state is forced and the migrating claim deleted (its finalizer
// completes in well under a second, its labels are gone, the other claim keeps its pod); a bound
// pod is deleted (the claim goes Lost, clears podName/nodeName, binds a new Idle pod); a pod deleted
// right after its label was removed still reaches its claim (P6, by spec.podName).
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_MIGRATE,
  LABEL_CLAIMED_BY,
  LABEL_STATE,
  type PodClaim,
  type PodClaimSet,
  type PodPool,
} from '@claimkit/core';
import { runDoctor } from '@claimkit/core/doctor';
import { afterAll, describe, expect, it } from 'vitest';
import { testPool } from '../harness/objects.ts';
import { useTestNamespace } from '../harness/vitest.ts';
import {
  expectAllInvariants,
  finalizeClaims,
  getOrUndefined,
  kube,
  type RunningController,
  startController,
  until,
} from './helpers.ts';

// A migration stays in progress (source draining) for the whole test.
const pool = (ns: string, minIdle: number): PodPool =>
  testPool(ns, 'web', { minIdle, maxPods: 20, drainSeconds: 600 });

describe('Seed B: finalize during a migration and scale-in', () => {
  const ns = useTestNamespace('ctl-seed-b');
  let ctl: RunningController | undefined;
  afterAll(async () => {
    if (ctl) await finalizeClaims(ns.name).catch(() => {});
    await ctl?.stop();
  });
  const claims = async () => (await kube().list('PodClaim', { namespace: ns.name })).items;
  const claim = (name: string) => getOrUndefined(kube().get('PodClaim', { namespace: ns.name, name }));
  const pod = (name: string) => getOrUndefined(kube().get('Pod', { namespace: ns.name, name }));
  const bound = async (name: string) => {
    const c = await claim(name);
    return c?.status?.phase === 'Bound' && c.status?.podName ? c : undefined;
  };

  it('the full story', async () => {
    const c = kube();
    ctl = await startController(ns.name);
    await c.create(pool(ns.name, 2));
    const set: PodClaimSet = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaimSet',
      metadata: { name: 'set', namespace: ns.name },
      spec: {
        replicas: 2,
        selector: { matchLabels: { 'claimkit.dev/claim-set': 'set' } },
        template: { metadata: { labels: { 'claimkit.dev/claim-set': 'set' } }, spec: { poolName: 'web' } },
      },
    };
    await c.create(set);
    const [a, b] = await until('2 bound claims', async () => {
      const cs = (await claims()).filter((x) => x.status?.phase === 'Bound');
      return cs.length === 2 ? cs : undefined;
    });

    // A migration in progress on claim a (the source drains for drainSeconds).
    await until('an Idle pod to migrate to', async () =>
      (await c.list('Pod', { namespace: ns.name })).items.some(
        (p) => p.metadata.labels?.[LABEL_STATE] === 'Idle' && p.status?.phase === 'Running',
      ),
    );
    await c.patch(
      'PodClaim',
      { namespace: ns.name, name: a!.metadata.name },
      {
        metadata: { annotations: { [ANNOTATION_MIGRATE]: 'e2e' } },
      },
    );
    const migrating = await until('a migrating', async () => {
      const x = await claim(a!.metadata.name);
      return x?.status?.sourcePod && x.status?.podName ? x : undefined;
    });

    // Scale-in to 1 at that moment: the migrating claim is not chosen.
    await c.patch('PodClaimSet', { namespace: ns.name, name: 'set' }, { spec: { replicas: 1 } });
    await until('b deleted', async () => !(await claim(b!.metadata.name)));
    const still = await claim(a!.metadata.name);
    expect(still?.metadata.deletionTimestamp).toBeUndefined();
    expect(still?.status?.sourcePod).toBe(migrating.status?.sourcePod);

    // Force the seed's two-claims-one-pod state: another claim references a's migration target
    // (written with the controller stopped, as a legacy writer would), then delete a.
    const other: PodClaim = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name: 'other', namespace: ns.name },
      spec: { poolName: 'web' },
    };
    await c.create(other);
    const o = await until('other bound', () => bound('other'));
    await ctl.stop();
    ctl = undefined;
    const target = migrating.status!.podName!;
    const source = migrating.status!.sourcePod!;
    await c.patchStatus(
      'PodClaim',
      { namespace: ns.name, name: 'other' },
      { status: { podName: target, podUID: null } },
    );
    await c.patch(
      'Pod',
      { namespace: ns.name, name: target },
      {
        metadata: {
          labels: { [LABEL_CLAIMED_BY]: 'other' },
          annotations: { [ANNOTATION_CLAIMED_BY_UID]: o.metadata.uid! },
        },
      },
    );
    await c.delete('PodClaim', { namespace: ns.name, name: a!.metadata.name });
    ctl = await startController(ns.name);
    const t0 = Date.now();
    await until(
      'a finalized',
      async () => {
        // By UID: the set's replacement claim may take the same name (claim-set names are derived
        // from the set's UID and an ordinal) as soon as a is gone.
        const left = await claim(a!.metadata.name);
        if (!left || left.metadata.uid !== a!.metadata.uid) return true;
        // Say what holds it (the wait reports this when it times out).
        const pods = (await c.list('Pod', { namespace: ns.name })).items.map(
          (p) =>
            `${p.metadata.name}:${p.metadata.labels?.[LABEL_CLAIMED_BY] ?? '-'}/${p.metadata.labels?.[LABEL_STATE] ?? '-'}`,
        );
        throw new Error(
          `claim ${left.metadata.name} (uid ${left.metadata.uid}, deleting since ${left.metadata.deletionTimestamp}) still there: finalizers ${JSON.stringify(left.metadata.finalizers)}, ` +
            `podName ${left.status?.podName}, sourcePod ${left.status?.sourcePod}, phase ${left.status?.phase}, ` +
            `conditions ${JSON.stringify(left.status?.conditions?.map((x) => [x.type, x.status, x.reason]))}; ` +
            `pods ${pods.join(' ')}; PodClaim reconciles ${JSON.stringify(ctl?.manager.metrics.reconciles.get({ kind: 'PodClaim', result: 'success' }))}`,
        );
      },
      10_000,
    );
    const finalizeMs = Date.now() - t0;
    expect(finalizeMs).toBeLessThan(1000);
    // No pod is left claimed by a (by UID: a replacement of the same name may hold one by now).
    for (const p of (await c.list('Pod', { namespace: ns.name })).items)
      expect(p.metadata.annotations?.[ANNOTATION_CLAIMED_BY_UID], p.metadata.name).not.toBe(a!.metadata.uid);
    const srcPod = await pod(source);
    // a's own source pod went back to the pool; the set's replacement claim may already have bound it.
    if (srcPod && srcPod.metadata.labels?.[LABEL_STATE] !== 'Idle') {
      const holder = srcPod.metadata.labels?.[LABEL_CLAIMED_BY];
      expect(holder, 'source pod re-bound by a live claim').toBeDefined();
      await until('re-binding claim references the source pod', async () =>
        (await claim(holder!))?.status?.podName === source ? true : undefined,
      );
    }
    const kept = await until('other keeps its pod', async () => {
      const x = await bound('other');
      const p = await pod(target);
      return x?.status?.podName === target && p?.metadata.labels?.[LABEL_CLAIMED_BY] === 'other'
        ? x
        : undefined;
    });
    expect(kept.status?.podName).toBe(target);
    expect(o.status?.podName).not.toBe(target); // other's earlier pod was released as a stray

    // Delete a bound pod: the claim goes Lost, clears podName/nodeName, binds a new Idle pod.
    const lostBefore = ctl.manager.metrics.events.get({ type: 'Warning', reason: 'Lost' });
    await c.delete('Pod', { namespace: ns.name, name: target }, { gracePeriodSeconds: 0 });
    const rebound = await until('other rebinds', async () => {
      const x = await bound('other');
      return x && x.status?.podName !== target ? x : undefined;
    });
    expect(rebound.status?.lostTime).toBeDefined();
    expect(ctl.manager.metrics.events.get({ type: 'Warning', reason: 'Lost' })).toBeGreaterThan(lostBefore);

    // P6: a pod deleted right after its claimed-by label was removed still reaches its claim.
    const q = rebound.status!.podName!;
    await c.patch(
      'Pod',
      { namespace: ns.name, name: q },
      { metadata: { labels: { [LABEL_CLAIMED_BY]: null } } },
    );
    await c.delete('Pod', { namespace: ns.name, name: q }, { gracePeriodSeconds: 0 });
    const again = await until(
      'other rebinds after its unlabelled pod is deleted',
      async () => {
        const x = await bound('other');
        return x && x.status?.podName !== q && x.status?.podName !== target ? x : undefined;
      },
      10_000,
    );
    expect(again.status?.nodeName).toBeTruthy();
    await expectAllInvariants(ns.name);
  });
});

// The replay that found P7: seed B's literal state, forced by direct writes with the controller
// stopped and no webhook, with no relabel to another claim first. Claim b references pod x; x is
// labelled claimed-by=a and Bound; a is deleted (its finalizer pending). b keeps x.
describe("Seed B's literal state (P7)", () => {
  const ns = useTestNamespace('ctl-seed-b-literal');
  let ctl: RunningController | undefined;
  afterAll(async () => {
    if (ctl) await finalizeClaims(ns.name).catch(() => {});
    await ctl?.stop();
  });
  const claim = (name: string) => getOrUndefined(kube().get('PodClaim', { namespace: ns.name, name }));
  const pod = (name: string) => getOrUndefined(kube().get('Pod', { namespace: ns.name, name }));
  const bound = async (name: string) => {
    const c = await claim(name);
    return c?.status?.phase === 'Bound' && c.status?.podName ? c : undefined;
  };

  it("seed B's literal state: b keeps x, nothing leaks, doctor is silent", async () => {
    const c = kube();
    const n = ns.name;
    ctl = await startController(n);
    await c.create(pool(n, 2));
    for (const name of ['lit-a', 'lit-b'])
      await c.create({
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        metadata: { name, namespace: n },
        spec: { poolName: 'web' },
      } as PodClaim);
    const a = await until('lit-a bound', () => bound('lit-a'));
    const b0 = await until('lit-b bound', () => bound('lit-b'));
    await ctl.stop();
    ctl = undefined;

    const x = a.status!.podName!;
    const bOld = b0.status!.podName!;
    // b's binding now references a's pod x (a buggy operator's write); x stays labelled for a.
    await c.patchStatus(
      'PodClaim',
      { namespace: n, name: 'lit-b' },
      { status: { podName: x, podUID: null } },
    );
    await c.delete('PodClaim', { namespace: n, name: 'lit-a' });
    expect((await claim('lit-a'))?.metadata.deletionTimestamp).toBeDefined();
    expect((await pod(x))?.metadata.labels?.[LABEL_CLAIMED_BY]).toBe('lit-a');

    ctl = await startController(n);
    const t0 = Date.now();
    await until('lit-a finalized', async () => !(await claim('lit-a')), 10_000);
    expect(Date.now() - t0).toBeLessThan(1000);
    const kept = await until('lit-b keeps x, labelled for it', async () => {
      const cur = await bound('lit-b');
      const p = await pod(x);
      return cur?.status?.podName === x && p?.metadata.labels?.[LABEL_CLAIMED_BY] === 'lit-b'
        ? cur
        : undefined;
    });
    expect(kept.status?.lostTime).toBeUndefined(); // never declared Lost on the way
    expect((await pod(x))?.metadata.labels?.[LABEL_STATE]).toBe('Bound');
    // b's old pod, which nothing references any more, goes back to the pool (P7: no leaked pod).
    await until("b's old pod released", async () => {
      const p = await pod(bOld);
      return !p || (p.metadata.labels?.[LABEL_STATE] === 'Idle' && !p.metadata.labels?.[LABEL_CLAIMED_BY]);
    });
    await expectAllInvariants(n);
    const doctor = await runDoctor(c, { namespace: n, now: () => Date.now(), stuckAfterMs: 0 });
    expect(doctor.findings).toEqual([]);
  });
});
