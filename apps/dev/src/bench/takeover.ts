// Takeover latency: the holder pod of a running capture is deleted; how long until the watch shows
// the next token (another pod holds the claim).
import { CaptureAgent, controllerDefaults, createKubeController } from '@claimkit/controller';
import type { Capture } from '@claimkit/core';
import { waitFor } from '@claimkit/e2e/harness';
import {
  type BenchContext,
  benchNamespace,
  cleanup,
  forEachConcurrently,
  isReady,
  podFor,
  summary,
} from './context.ts';

export async function benchTakeover(ctx: BenchContext, trials: number) {
  const { kube } = ctx;
  const ns = await benchNamespace(ctx, 'bench-takeover');
  const ctl = createKubeController({
    config: { ...controllerDefaults(), kubeconfig: ctx.kubeconfig, namespace: ns },
  });
  await ctl.manager.start();
  const agent = new CaptureAgent({
    capture: (_r, signal) =>
      new Promise((_res, rej) => signal.addEventListener('abort', () => rej(new Error('superseded')))),
  });
  const url = (await agent.listen(0, '127.0.0.1')).url;
  await forEachConcurrently(
    Array.from({ length: trials + 3 }, (_, i) => i),
    8,
    (i) => kube.create(podFor(`cand-${i}`, ns, { app: 'cand' })),
  );
  await waitFor(
    'candidates Ready',
    async () => (await kube.list('Pod', { namespace: ns })).items.filter(isReady).length >= trials + 3,
    { timeoutMs: 120_000 },
  );
  const tokens = new Map<number, number>(); // token -> first seen (ms)
  const stopWatching = kube.watch(
    'Capture',
    { namespace: ns, allowWatchBookmarks: true },
    {
      onEvent: (e) => {
        const t = e.object.status?.claim?.token;
        if (t !== undefined && !tokens.has(t)) tokens.set(t, performance.now());
      },
    },
  );
  const cap: Capture = {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'Capture',
    metadata: { name: 'snap', namespace: ns },
    spec: {
      selector: { matchLabels: { app: 'cand' } },
      leaseSeconds: 3000,
      timeoutSeconds: 1800,
      maxAttempts: 3,
      backend: { type: 'Http', url },
    },
  };
  await kube.create(cap);
  const lat: number[] = [];
  for (let i = 0; i < trials; i++) {
    const claim = await waitFor(
      'a running job',
      async () => {
        const c = await kube.get('Capture', { namespace: ns, name: 'snap' });
        return c.status?.claim?.job ? c.status.claim : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    const t0 = performance.now();
    await kube.delete('Pod', { namespace: ns, name: claim.holder.name }, { gracePeriodSeconds: 0 });
    await waitFor('takeover', () => tokens.has(claim.token + 1), { timeoutMs: 30_000, intervalMs: 2 });
    lat.push(tokens.get(claim.token + 1)! - t0);
  }
  stopWatching();
  const takeovers = ctl.manager.metrics.takeovers.total();
  await ctl.manager.stop();
  await agent.close();
  await cleanup(ctx, ns);
  return {
    method: `Capture with leaseSeconds 3000 and the Http backend (reference agent, jobs never finish); ${trials + 3} Ready candidate pods on kwok; per trial: delete the holder pod (grace 0), latency = from the delete call to the watch event carrying the next token.`,
    ...summary(lat),
    takeoverEvents: takeovers,
    agentTokensStrictlyIncreasing: agent.tokenViolations().length === 0,
    targetP99Ms: 1000,
  };
}
