// The claim side of pools on the real control plane: a claim says why it waits (and a claim naming
// a missing pool binds nothing), podMetadata rides the bind's own write and a recycle removes it,
// Bound pods carry the disruption hints and Idle pods a deletion cost, lostPolicy Fail stays Lost.
import {
  ANNOTATION_DELETION_COST,
  ANNOTATION_DO_NOT_DISRUPT,
  ANNOTATION_POD_METADATA_KEYS,
  ANNOTATION_SAFE_TO_EVICT,
  type KubeEvent,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type Pod,
  type PodClaim,
} from '@claimkit/core';
import { checkClaimSide } from '@claimkit/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { testPool } from '../harness/objects.ts';
import { useTestNamespace } from '../harness/vitest.ts';
import {
  clusterState,
  expectAllInvariants,
  finalizeClaims,
  isReady,
  kube,
  podSpec,
  type RunningController,
  startController,
  until,
} from './helpers.ts';

const boundCondition = (c: PodClaim | undefined) => c?.status?.conditions?.find((x) => x.type === 'Bound');

/** A window in which the controller reconciles the claim again (its wait requeue is 5 s). */
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PodClaim: why it waits, podMetadata, lostPolicy, disruption hints', () => {
  const ns = useTestNamespace('ctl-claim-side');
  let ctl: RunningController | undefined;
  let stopWatch: (() => void) | undefined;
  afterAll(async () => {
    stopWatch?.();
    if (ctl) await finalizeClaims(ns.name).catch(() => {});
    await ctl?.stop();
  });

  const claim = (name: string, spec: Partial<PodClaim['spec']> & { poolName: string }): PodClaim => ({
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodClaim',
    metadata: { name, namespace: ns.name },
    spec,
  });
  const getClaim = (name: string) => kube().get('PodClaim', { namespace: ns.name, name });
  const idlePods = async () =>
    (
      await kube().list('Pod', {
        namespace: ns.name,
        labelSelector: { matchLabels: { [LABEL_POOL]: 'warm' } },
      })
    ).items.filter(
      (p) => p.metadata.labels?.[LABEL_STATE] === 'Idle' && !p.metadata.deletionTimestamp && isReady(p),
    );

  it('a claim naming a missing pool says PoolNotFound, once, and binds nothing', async () => {
    const c = kube();
    ctl ??= await startController(ns.name);
    // An Idle, Ready-looking pod labelled for the missing pool name (made by hand).
    await c.create(podSpec('ghost-1', ns.name, { [LABEL_POOL]: 'ghost', [LABEL_STATE]: 'Idle' }));
    await c.create(claim('lonely', { poolName: 'ghost' }));
    await until(
      'PoolNotFound on the claim',
      async () => boundCondition(await getClaim('lonely'))?.reason === 'PoolNotFound',
    );
    await pause(6000);
    const after = await getClaim('lonely');
    expect(after.status?.podName ?? '').toBe('');
    expect(after.status?.phase).toBe('Pending');
    expect(boundCondition(after)?.message).toContain('ghost');
    const ghost = await c.get('Pod', { namespace: ns.name, name: 'ghost-1' });
    expect(ghost.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    const events = (
      await c.list('Event', { namespace: ns.name, fieldSelector: { 'involvedObject.name': 'lonely' } })
    ).items as KubeEvent[];
    const notFound = events.filter((e) => e.reason === 'PoolNotFound');
    expect(notFound.reduce((n, e) => n + (e.count ?? 1), 0)).toBe(1);
    await c.delete('Pod', { namespace: ns.name, name: 'ghost-1' });
  });

  it('podMetadata and the hints land in the bind write itself; a recycle removes exactly them', async () => {
    const c = kube();
    ctl ??= await startController(ns.name);
    // Every version of every pod, to find the one write that bound it.
    const versions: Pod[] = [];
    stopWatch = c.watch('Pod', { namespace: ns.name }, { onEvent: (e) => void versions.push(e.object) });
    await c.create(testPool(ns.name, 'warm', { minIdle: 1, maxPods: 5 }));
    await until('an Idle Ready pod', async () => (await idlePods()).length >= 1, 60_000);
    for (const p of await idlePods()) {
      expect(Number(p.metadata.annotations?.[ANNOTATION_DELETION_COST])).toBeLessThan(0);
      expect(p.metadata.annotations?.[ANNOTATION_DO_NOT_DISRUPT]).toBeUndefined();
    }
    await c.create(
      claim('meta', {
        poolName: 'warm',
        podMetadata: { labels: { team: 'a', app: 'claimed' }, annotations: { 'example.com/owner': 'alice' } },
      }),
    );
    await until('meta Bound', async () => (await getClaim('meta')).status?.phase === 'Bound', 60_000);
    const podName = (await getClaim('meta')).status!.podName!;
    expect(boundCondition(await getClaim('meta'))).toMatchObject({ status: 'True', reason: 'Bound' });
    // The first version of the pod labelled for the claim has everything: one write did it all.
    await until('the bind seen by the watch', async () =>
      versions.some((p) => p.metadata.name === podName && p.metadata.labels?.[LABEL_CLAIMED_BY] === 'meta'),
    );
    const mine = versions.filter((p) => p.metadata.name === podName);
    const first = mine.findIndex((p) => p.metadata.labels?.[LABEL_CLAIMED_BY] === 'meta');
    const bound = mine[first]!;
    expect(bound.metadata.labels).toMatchObject({ [LABEL_STATE]: 'Bound', team: 'a', app: 'claimed' });
    expect(bound.metadata.annotations).toMatchObject({
      'example.com/owner': 'alice',
      [ANNOTATION_DO_NOT_DISRUPT]: 'true',
      [ANNOTATION_SAFE_TO_EVICT]: 'false',
    });
    expect(bound.metadata.annotations?.[ANNOTATION_DELETION_COST]).toBeUndefined();
    // ...and the version before it was the Idle pod without any of it.
    const before = mine[first - 1];
    if (before) {
      expect(before.metadata.labels?.[LABEL_STATE]).toBe('Idle');
      expect(before.metadata.labels?.team).toBeUndefined();
    }
    // Release: deleting the claim recycles the pod.
    await c.delete('PodClaim', { namespace: ns.name, name: 'meta' });
    await until('the pod recycled', async () => {
      const p = await c.get('Pod', { namespace: ns.name, name: podName });
      return p.metadata.labels?.[LABEL_STATE] === 'Idle' ? p : undefined;
    });
    const recycled = await c.get('Pod', { namespace: ns.name, name: podName });
    expect(recycled.metadata.labels?.app).toBe('warm');
    expect(recycled.metadata.labels?.team).toBeUndefined();
    expect(recycled.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    const a = recycled.metadata.annotations ?? {};
    expect(a['example.com/owner']).toBeUndefined();
    expect(a[ANNOTATION_POD_METADATA_KEYS]).toBeUndefined();
    expect(a[ANNOTATION_DO_NOT_DISRUPT]).toBeUndefined();
    expect(a[ANNOTATION_SAFE_TO_EVICT]).toBeUndefined();
    expect(Number(a[ANNOTATION_DELETION_COST])).toBeLessThan(0);
    expect(checkClaimSide(await clusterState(ns.name))).toEqual([]);
    await expectAllInvariants(ns.name);
  });

  it('lostPolicy Fail: after its pod is deleted the claim stays Lost beside an Idle pod', async () => {
    const c = kube();
    ctl ??= await startController(ns.name);
    await c.create(claim('keep', { poolName: 'warm', lostPolicy: 'Fail' }));
    await until('keep Bound', async () => (await getClaim('keep')).status?.phase === 'Bound', 60_000);
    const podName = (await getClaim('keep')).status!.podName!;
    await c.delete('Pod', { namespace: ns.name, name: podName });
    await until(
      'keep Lost for good',
      async () => boundCondition(await getClaim('keep'))?.reason === 'LostPolicyFail',
    );
    await until('an Idle Ready pod to be tempted by', async () => (await idlePods()).length >= 1, 60_000);
    await pause(6000);
    const after = await getClaim('keep');
    expect(after.status?.phase).toBe('Lost');
    expect(after.status?.podName ?? '').toBe('');
    const held = (await c.list('Pod', { namespace: ns.name })).items.filter(
      (p) => p.metadata.labels?.[LABEL_CLAIMED_BY] === 'keep',
    );
    expect(held).toEqual([]);
    await expectAllInvariants(ns.name);
  });
  it('kubectl replace --force of a Bound pod while the controller is down: the claim (lostPolicy Fail) goes Lost and never takes the new pod of that name', async () => {
    const c = kube();
    ctl ??= await startController(ns.name);
    await c.create(claim('replaced', { poolName: 'warm', lostPolicy: 'Fail' }));
    await until('replaced Bound', async () => (await getClaim('replaced')).status?.phase === 'Bound', 60_000);
    const bound = await getClaim('replaced');
    const podName = bound.status!.podName!;
    const old = await c.get('Pod', { namespace: ns.name, name: podName });
    expect(bound.status?.podUID).toBe(old.metadata.uid);
    // What `kubectl replace --force -f pod.yaml` does with `kubectl get -o yaml`'s output: delete,
    // wait until gone, create the same object (labels, claimed-by-uid, node) anew. The controller is
    // down meanwhile (a restart, an upgrade): when it comes back, all it sees is its claim's pod
    // labelled for it, under the same name.
    await ctl?.stop();
    ctl = undefined;
    await c.delete('Pod', { namespace: ns.name, name: podName }, { gracePeriodSeconds: 0 });
    await until('the old pod gone', async () => {
      try {
        await c.get('Pod', { namespace: ns.name, name: podName });
        return false;
      } catch {
        return true;
      }
    });
    const {
      uid: _u,
      resourceVersion: _r,
      creationTimestamp: _c,
      deletionTimestamp: _d,
      managedFields: _m,
      ...meta
    } = old.metadata as Pod['metadata'] & { managedFields?: unknown };
    const { status: _s, ...rest } = old;
    const created = await c.create({ ...rest, metadata: meta } as Pod);
    expect(created.metadata.labels?.[LABEL_CLAIMED_BY]).toBe('replaced');
    ctl = await startController(ns.name);
    await until(
      'replaced Lost for good',
      async () => boundCondition(await getClaim('replaced'))?.reason === 'LostPolicyFail',
    );
    await until('the new pod released (no claim label)', async () => {
      const p = await c.get('Pod', { namespace: ns.name, name: podName });
      return p.metadata.uid === created.metadata.uid && !p.metadata.labels?.[LABEL_CLAIMED_BY];
    });
    const after = await getClaim('replaced');
    expect(after.status?.podName ?? '').toBe('');
    expect(after.status?.podUID).toBeUndefined();
    // Events are written off the worker's path: wait for it.
    await until('a Lost event saying the pod was replaced', async () => {
      const events = (
        await c.list('Event', { namespace: ns.name, fieldSelector: { 'involvedObject.name': 'replaced' } })
      ).items as KubeEvent[];
      return events.some((e) => e.reason === 'Lost' && e.message?.includes('was replaced'));
    });
    await expectAllInvariants(ns.name);
  });
});
