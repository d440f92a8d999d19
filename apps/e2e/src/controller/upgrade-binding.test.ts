// The upgrade that moved a claim's binding from spec to status, on the real API server: claims as
// the previous release stored them (podName, nodeName and sourcePod in spec, the pod's UID in the
// claimkit.dev/pod-uid annotation, lostPolicy Fail's claimkit.dev/lost-at mark) and their pods as its
// binds labelled them, written while no controller runs (the old one is gone, the new one not yet
// started). The CRD installed is the current one, which serves such stored objects unchanged, as
// the API server does after `kubectl apply -f deploy/crds` of the new release. The new controller
// moves every binding to status without a claim losing its pod, and the old place is closed.
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_MIGRATE,
  ANNOTATION_POD_UID,
  FINALIZER_RELEASE,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type Pod,
  type PodClaim,
} from '@claimkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { testPool } from '../harness/objects.ts';
import { useTestNamespace } from '../harness/vitest.ts';
import {
  expectAllInvariants,
  finalizeClaims,
  isReady,
  kube,
  type RunningController,
  startController,
  until,
} from './helpers.ts';

const LOST_AT = 'claimkit.dev/lost-at';

describe('upgrade: claims stored with the binding in spec keep their pods', () => {
  const ns = useTestNamespace('ctl-upgrade-binding');
  let ctl: RunningController | undefined;
  let stopWatch: (() => void) | undefined;
  afterAll(async () => {
    stopWatch?.();
    if (ctl) await finalizeClaims(ns.name).catch(() => {});
    await ctl?.stop();
  });

  const key = (name: string) => ({ namespace: ns.name, name });

  /** A claim as the previous release's bind left it, status included (written through /status). */
  async function storeLegacyClaim(
    name: string,
    spec: Partial<PodClaim['spec']>,
    annotations: Record<string, string>,
    status: PodClaim['status'],
  ): Promise<PodClaim> {
    const c = kube();
    const created = await c.create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name, namespace: ns.name, finalizers: [FINALIZER_RELEASE], annotations },
      spec: { poolName: 'web', ...spec },
    } as PodClaim);
    return c.updateStatus({ ...created, status });
  }

  /** The pod as the previous release's bind CAS labelled it for `claim`. */
  async function labelFor(pod: Pod, claim: PodClaim): Promise<void> {
    await kube().patch(
      'Pod',
      key(pod.metadata.name),
      {
        metadata: {
          labels: { [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: claim.metadata.name },
          annotations: { [ANNOTATION_CLAIMED_BY_UID]: claim.metadata.uid! },
        },
      },
      { resourceVersion: pod.metadata.resourceVersion!, uid: pod.metadata.uid! },
    );
  }

  it('Bound, migrating and Lost-for-good claims come through; new claims bind in two writes', async () => {
    const c = kube();
    await c.create(testPool(ns.name, 'web', { minIdle: 4, maxPods: 8 }));
    ctl = await startController(ns.name);
    const idle = await until(
      'four Ready Idle pods',
      async () => {
        const pods = (
          await c.list('Pod', { namespace: ns.name, labelSelector: { matchLabels: { [LABEL_POOL]: 'web' } } })
        ).items.filter((p) => p.metadata.labels?.[LABEL_STATE] === 'Idle' && isReady(p));
        return pods.length >= 4 ? pods : undefined;
      },
      60_000,
    );
    await ctl.stop();
    ctl = undefined;

    const [p1, p2, p3] = idle as [Pod, Pod, Pod];
    const record = (p: Pod) => `${p.metadata.name}/${p.metadata.uid}`;
    const bound = await storeLegacyClaim(
      'bound',
      { podName: p1.metadata.name, nodeName: p1.spec.nodeName ?? '' },
      { [ANNOTATION_POD_UID]: record(p1) },
      { phase: 'Bound', boundTime: new Date().toISOString() },
    );
    await labelFor(p1, bound);
    const migrating = await storeLegacyClaim(
      'migrating',
      { podName: p2.metadata.name, nodeName: p2.spec.nodeName ?? '', sourcePod: p3.metadata.name },
      { [ANNOTATION_POD_UID]: record(p2), [ANNOTATION_MIGRATE]: 'upgrade' },
      { phase: 'Migrating', boundTime: new Date().toISOString(), migrations: 1 },
    );
    await labelFor(p2, migrating);
    await labelFor(await c.get('Pod', key(p3.metadata.name)), migrating);
    const lostAt = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    // Lost for good, whose status write never landed (the mark alone says it lost its pod).
    await storeLegacyClaim('lost', { lostPolicy: 'Fail' }, { [LOST_AT]: lostAt }, { phase: 'Pending' });

    // Nobody may take a bound pod away from its claim meanwhile: watch p1's and p2's labels.
    const seen: string[] = [];
    stopWatch = c.watch(
      'Pod',
      { namespace: ns.name },
      {
        onEvent: (e) => {
          const name = e.object.metadata.name;
          if (name === p1.metadata.name || name === p2.metadata.name)
            seen.push(`${name}:${e.object.metadata.labels?.[LABEL_CLAIMED_BY] ?? '-'}`);
        },
      },
    );

    ctl = await startController(ns.name);
    await c.create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name: 'fresh', namespace: ns.name, finalizers: [FINALIZER_RELEASE] },
      spec: { poolName: 'web' },
    } as PodClaim);

    const moved = (cl: PodClaim | undefined) =>
      cl &&
      cl.spec.podName === undefined &&
      cl.spec.sourcePod === undefined &&
      !cl.metadata.annotations?.[ANNOTATION_POD_UID];
    const b = await until('bound moved to status, on its pod', async () => {
      const cl = await c.get('PodClaim', key('bound'));
      return moved(cl) && cl.status?.podName === p1.metadata.name ? cl : undefined;
    });
    expect(b.status).toMatchObject({ phase: 'Bound', nodeName: p1.spec.nodeName, podUID: p1.metadata.uid });
    const m = await until('migrating moved, and its migration finished on the target', async () => {
      const cl = await c.get('PodClaim', key('migrating'));
      return moved(cl) &&
        cl.status?.podName === p2.metadata.name &&
        !cl.status?.sourcePod &&
        cl.status?.phase === 'Bound'
        ? cl
        : undefined;
    });
    expect(m.status?.podUID).toBe(p2.metadata.uid);
    expect(m.metadata.annotations?.[ANNOTATION_MIGRATE]).toBeUndefined();
    await until('the migration source back in the pool', async () => {
      const p = await c.get('Pod', key(p3.metadata.name)).catch(() => undefined);
      return !p || p.metadata.labels?.[LABEL_CLAIMED_BY] === undefined;
    });
    const l = await until('lost moved: lostTime from the mark, still Lost', async () => {
      const cl = await c.get('PodClaim', key('lost'));
      return !cl.metadata.annotations?.[LOST_AT] && cl.status?.phase === 'Lost' ? cl : undefined;
    });
    expect(l.status?.lostTime).toBe(lostAt);
    expect(l.status?.podName ?? '').toBe('');
    await until('fresh Bound', async () => (await c.get('PodClaim', key('fresh'))).status?.phase === 'Bound');

    // No claim lost its pod, and no pod changed hands.
    const events = (await c.list('Event', { namespace: ns.name })).items;
    expect(events.filter((e) => e.reason === 'Lost' && e.involvedObject.kind === 'PodClaim')).toEqual([]);
    expect(seen.filter((s) => !s.endsWith(':bound') && !s.endsWith(':migrating'))).toEqual([]);
    expect((await c.get('Pod', key(p1.metadata.name))).metadata.labels?.[LABEL_CLAIMED_BY]).toBe('bound');

    // The binding's old place is closed for good: a writer still on the old API is refused.
    const cur = await c.get('PodClaim', key('fresh'));
    await expect(
      c.update({ ...cur, spec: { ...cur.spec, podName: p3.metadata.name } }),
    ).rejects.toMatchObject({
      reason: 'Invalid',
    });
    await expectAllInvariants(ns.name);
  }, 180_000);
});
