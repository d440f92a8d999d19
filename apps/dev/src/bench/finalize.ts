// Finalize latency of a migrating claim: a claim mid-migration (source draining, target bound) is
// deleted; how long until its finalizer has completed (the watch's DELETED event).
import { controllerDefaults, createKubeController } from '@claimkit/controller';
import { ANNOTATION_MIGRATE, LABEL_STATE, type PodClaim } from '@claimkit/core';
import { testPool, waitFor } from '@claimkit/e2e/harness';
import { type BenchContext, benchNamespace, cleanup, isReady, summary } from './context.ts';

export async function benchFinalize(ctx: BenchContext) {
  const { kube } = ctx;
  const ns = await benchNamespace(ctx, 'bench-finalize');
  const ctl = createKubeController({
    config: { ...controllerDefaults(), kubeconfig: ctx.kubeconfig, namespace: ns },
  });
  await ctl.manager.start();
  const n = 10;
  const p = testPool(ns, 'mig', {
    minIdle: 2,
    maxPods: 60,
    drainSeconds: 600,
    image: 'registry.k8s.io/pause:3.10',
  });
  await kube.create(p);
  const gone = new Map<string, number>();
  const stopWatching = kube.watch(
    'PodClaim',
    { namespace: ns, allowWatchBookmarks: true },
    {
      onEvent: (e) => {
        if (e.type === 'DELETED') gone.set(e.object.metadata.name, performance.now());
      },
    },
  );
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const name = `m-${i}`;
    await kube.create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name, namespace: ns },
      spec: { poolName: 'mig' },
    } as PodClaim);
    await waitFor(
      'bound',
      async () => (await kube.get('PodClaim', { namespace: ns, name })).status?.phase === 'Bound',
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    await waitFor(
      'an Idle Ready pod',
      async () =>
        (await kube.list('Pod', { namespace: ns })).items.some(
          (x) => x.metadata.labels?.[LABEL_STATE] === 'Idle' && isReady(x),
        ),
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    await kube.patch(
      'PodClaim',
      { namespace: ns, name },
      { metadata: { annotations: { [ANNOTATION_MIGRATE]: 'bench' } } },
    );
    await waitFor(
      'migrating',
      async () => !!(await kube.get('PodClaim', { namespace: ns, name })).spec.sourcePod,
      { timeoutMs: 30_000, intervalMs: 10 },
    );
    const t0 = performance.now();
    await kube.delete('PodClaim', { namespace: ns, name });
    await waitFor('finalized', () => gone.has(name), { timeoutMs: 30_000, intervalMs: 2 });
    lat.push(gone.get(name)! - t0);
  }
  stopWatching();
  await ctl.manager.stop();
  await cleanup(ctx, ns);
  return {
    method: `a claim mid-migration (source Draining for drainSeconds 600, target bound) is deleted; latency = from the delete call to the watch DELETED event (the finalizer completed); ${n} trials.`,
    ...summary(lat),
  };
}
