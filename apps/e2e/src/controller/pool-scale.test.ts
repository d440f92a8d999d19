// PodPool's scale subresource and template rollout on the real control plane: `kubectl scale`
// (PUT podpools/<name>/scale) changes minIdle and the controller converges, down to zero; the
// HPA controller of kube-controller-manager reads the pool's /scale and selector; a template change
// replaces Idle pods without the Ready Idle count dropping below minIdle, and an outdated Bound pod
// is deleted, not recycled, when its claim releases it.
import { LABEL_STATE, LABEL_TEMPLATE_HASH, type Pod, type PodClaim, type PodPool } from '@claimkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { testPool } from '../harness/objects.ts';
import { e2eClients, useTestNamespace } from '../harness/vitest.ts';
import {
  expectAllInvariants,
  finalizeClaims,
  isReady,
  kube,
  type RunningController,
  startController,
  until,
} from './helpers.ts';

interface Scale {
  metadata: { name: string; resourceVersion?: string };
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

describe('PodPool scale subresource and template rollout', () => {
  const ns = useTestNamespace('ctl-pool-scale');
  let ctl: RunningController | undefined;
  afterAll(async () => {
    if (ctl) await finalizeClaims(ns.name).catch(() => {});
    await ctl?.stop();
  });
  const scaleOf = (name: string) => ({
    group: 'claimkit.dev',
    version: 'v1alpha1',
    namespace: ns.name,
    plural: 'podpools',
    name,
  });
  const readyIdle = async (pool: string) =>
    (
      await kube().list('Pod', { namespace: ns.name, labelSelector: `claimkit.dev/pool=${pool}` })
    ).items.filter(
      (p) => p.metadata.labels?.[LABEL_STATE] === 'Idle' && !p.metadata.deletionTimestamp && isReady(p),
    );

  it('kubectl scale sets minIdle (to zero too); /scale reports the Idle count and the pods selector', async () => {
    const c = kube();
    const custom = e2eClients().custom;
    ctl ??= await startController(ns.name);
    await c.create(testPool(ns.name, 'scaled', { minIdle: 1, maxPods: 10 }));
    await until('1 Ready Idle pod', async () => (await readyIdle('scaled')).length === 1, 60_000);

    const scale = (await custom.getNamespacedCustomObjectScale(scaleOf('scaled'))) as Scale;
    expect(scale.spec.replicas).toBe(1);
    await until('scale status: 1 Idle and the selector', async () => {
      const s = (await custom.getNamespacedCustomObjectScale(scaleOf('scaled'))) as Scale;
      return s.status.replicas === 1 && s.status.selector === 'claimkit.dev/pool=scaled';
    });

    const cur = (await custom.getNamespacedCustomObjectScale(scaleOf('scaled'))) as Scale;
    await custom.replaceNamespacedCustomObjectScale({
      ...scaleOf('scaled'),
      body: { ...cur, spec: { replicas: 4 } },
    });
    expect((await c.get('PodPool', { namespace: ns.name, name: 'scaled' })).spec.minIdle).toBe(4);
    await until('4 Ready Idle pods', async () => (await readyIdle('scaled')).length === 4, 60_000);

    // The API server validates a scale write as an update of the pool: above maxPods is refused.
    const over = await custom
      .replaceNamespacedCustomObjectScale({
        ...scaleOf('scaled'),
        body: { ...cur, metadata: { name: 'scaled' }, spec: { replicas: 11 } },
      })
      .then(
        () => undefined,
        (e: { code?: number }) => e.code,
      );
    expect(over).toBe(422);

    const again = (await custom.getNamespacedCustomObjectScale(scaleOf('scaled'))) as Scale;
    await custom.replaceNamespacedCustomObjectScale({
      ...scaleOf('scaled'),
      body: { ...again, spec: { replicas: 0 } },
    });
    await until(
      'scaled to zero: no pool pods',
      async () => {
        const pods = (await c.list('Pod', { namespace: ns.name, labelSelector: 'claimkit.dev/pool=scaled' }))
          .items;
        return pods.filter((p) => !p.metadata.deletionTimestamp).length === 0;
      },
      60_000,
    );
    await expectAllInvariants(ns.name);
  });

  it('an HPA resolves the pool through /scale and its selector', async () => {
    const c = kube();
    ctl ??= await startController(ns.name);
    await c.create(testPool(ns.name, 'autoscaled', { minIdle: 2, maxPods: 10 }));
    await until('2 Ready Idle pods', async () => (await readyIdle('autoscaled')).length === 2, 60_000);
    const objects = e2eClients().objects;
    const hpa = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'autoscaled', namespace: ns.name },
      spec: {
        scaleTargetRef: { apiVersion: 'claimkit.dev/v1alpha1', kind: 'PodPool', name: 'autoscaled' },
        minReplicas: 1,
        maxReplicas: 8,
        // No external metrics API is served here: the HPA reads the scale, then fails on the metric.
        metrics: [
          {
            type: 'External',
            external: {
              metric: { name: 'claimkit_pending_claims' },
              target: { type: 'AverageValue', averageValue: '1' },
            },
          },
        ],
      },
    };
    await objects.create(hpa);
    type Cond = { type: string; status: string; reason?: string; message?: string };
    let conditions: Cond[] = [];
    await until(
      'the HPA controller read the scale and the selector',
      async () => {
        const got = (await objects.read({
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: 'autoscaled', namespace: ns.name },
        })) as unknown as { status?: { conditions?: Cond[]; currentReplicas?: number } };
        conditions = got.status?.conditions ?? [];
        const active = conditions.find((x) => x.type === 'ScalingActive');
        return (
          conditions.some((x) => x.type === 'AbleToScale' && x.status === 'True') &&
          active?.reason !== undefined
        );
      },
      90_000,
    );
    // AbleToScale=True (SucceededGetScale): GET podpools/autoscaled/scale worked. The metric fails,
    // not the selector: an empty status.selector would say InvalidSelector instead.
    expect(conditions.find((x) => x.type === 'AbleToScale')?.reason).toBe('SucceededGetScale');
    expect(conditions.find((x) => x.type === 'ScalingActive')?.reason).toBe('FailedGetExternalMetric');
    // The HPA changes nothing without a metric.
    expect((await c.get('PodPool', { namespace: ns.name, name: 'autoscaled' })).spec.minIdle).toBe(2);
    await objects.delete(hpa);
  });

  it('a template change replaces Idle pods warm-before-delete; an outdated Bound pod is deleted on release', async () => {
    const c = kube();
    ctl ??= await startController(ns.name);
    const key = { namespace: ns.name, name: 'rolled' };
    await c.create(testPool(ns.name, 'rolled', { minIdle: 3, maxPods: 10 }));
    await until('3 Ready Idle pods', async () => (await readyIdle('rolled')).length === 3, 60_000);
    const claim: PodClaim = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name: 'holder', namespace: ns.name },
      spec: { poolName: 'rolled' },
    };
    await c.create(claim);
    const bound = await until(
      'the claim is Bound',
      async () => {
        const cl = await c.get('PodClaim', { namespace: ns.name, name: 'holder' });
        return cl.status?.phase === 'Bound' ? (cl.status?.podName ?? undefined) : undefined;
      },
      60_000,
    );
    await until('3 Ready Idle pods again', async () => (await readyIdle('rolled')).length === 3, 60_000);
    const oldPods = new Set(
      (await c.list('Pod', { namespace: ns.name, labelSelector: 'claimkit.dev/pool=rolled' })).items.map(
        (p) => p.metadata.name,
      ),
    );

    const pool = await c.get('PodPool', key);
    const next: PodPool = structuredClone(pool);
    next.spec.template.spec.containers[0]!.image = 'registry.example/rolled:2';
    const updated = await c.update(next);
    let minReadyIdle = Number.POSITIVE_INFINITY;
    const current = await until(
      'Idle pods all of the new template',
      async () => {
        const p = await c.get('PodPool', key);
        const idle = await readyIdle('rolled');
        minReadyIdle = Math.min(minReadyIdle, idle.length);
        const hash = p.status?.templateHash;
        // Status is written from the state each reconcile read: wait for the one after the deletes.
        const done =
          p.status?.observedGeneration === updated.metadata.generation &&
          p.status?.outdated === 1 &&
          p.status?.updated === 3 &&
          hash !== undefined &&
          idle.length === 3 &&
          idle.every(
            (x: Pod) => x.metadata.labels?.[LABEL_TEMPLATE_HASH] === hash && !oldPods.has(x.metadata.name),
          );
        return done ? p : undefined;
      },
      90_000,
    );
    expect(minReadyIdle).toBeGreaterThanOrEqual(3);
    // The claim keeps its pod, which is outdated until released.
    expect(current.status).toMatchObject({ outdated: 1, updated: 3 });
    expect(current.status?.conditions?.find((x) => x.type === 'TemplateUpToDate')).toMatchObject({
      status: 'False',
      reason: 'OutdatedPodsBound',
    });
    expect((await c.get('Pod', { namespace: ns.name, name: bound })).metadata.labels?.[LABEL_STATE]).toBe(
      'Bound',
    );

    await c.delete('PodClaim', { namespace: ns.name, name: 'holder' });
    await until(
      'the outdated pod is deleted, not recycled',
      async () => {
        const p = await c.get('Pod', { namespace: ns.name, name: bound }).catch(() => undefined);
        return p === undefined || Boolean(p.metadata.deletionTimestamp);
      },
      60_000,
    );
    await until(
      'TemplateUpToDate',
      async () => {
        const p = await c.get('PodPool', key);
        return p.status?.conditions?.some((x) => x.type === 'TemplateUpToDate' && x.status === 'True');
      },
      60_000,
    );
    await expectAllInvariants(ns.name);
  });
});
