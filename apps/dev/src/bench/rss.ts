// Controller RSS with N bound claims and N pods: the shipped controller (dist/, with its image's
// Node flags) in its own process, from cache sync until every key is reconciled and the queue is
// empty; RSS from /proc.
import { execFileSync } from 'node:child_process';
import {
  ANNOTATION_DO_NOT_DISRUPT,
  ANNOTATION_SAFE_TO_EVICT,
  FINALIZER_RELEASE,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type PodClaim,
  type PodPool,
} from '@claimkit/core';
import { repoRoot, waitFor } from '@claimkit/e2e/harness';
import { type BenchContext, benchNamespace, cleanup, forEachConcurrently, podFor, r1 } from './context.ts';
import { CONTROLLER_NODE_FLAGS, freePort, rssMb, spawnShippedController } from './controller-process.ts';
import { requestCounts } from './stats.ts';

export async function benchRss(ctx: BenchContext, n: number) {
  const { kube, say } = ctx;
  say('building the controller (the RSS run measures dist/, as shipped) ...');
  execFileSync('pnpm', ['turbo', 'run', 'build', '--filter=@claimkit/controller...'], {
    cwd: repoRoot,
    stdio: 'ignore',
  });
  const ns = await benchNamespace(ctx, 'bench-rss');
  const poolName = 'rss';
  await kube.create({
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodPool',
    metadata: { name: poolName, namespace: ns },
    spec: {
      template: {
        metadata: { labels: { app: 'rss' } },
        spec: { containers: [{ name: 'main', image: 'x' }] },
      },
      minIdle: 0,
      maxPods: n,
      releasePolicy: 'Recycle',
      drainSeconds: 0,
    },
  } as PodPool);
  say(
    `creating ${n} pods and ${n} bound PodClaims (unscheduled pods: schedulerName claimkit-bench-none, so neither the scheduler nor kwok touches them) ...`,
  );
  const t0 = performance.now();
  await forEachConcurrently(
    Array.from({ length: n }, (_, i) => i),
    32,
    async (i) => {
      const name = `r-${i}`;
      const held = podFor(
        name,
        ns,
        { [LABEL_POOL]: poolName, [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: name, app: 'rss' },
        { schedulerName: 'claimkit-bench-none' },
      );
      // The disruption hints the controller writes on a bind: without them each claim's first
      // reconcile patches its pod (a pod bound before the hints existed), and the run measures the
      // API server's pod-patch rate (10,000 patches) instead of the controller at rest.
      held.metadata.annotations = {
        [ANNOTATION_DO_NOT_DISRUPT]: 'true',
        [ANNOTATION_SAFE_TO_EVICT]: 'false',
      };
      await kube.create(held);
      const c = await kube.create({
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        metadata: { name, namespace: ns, finalizers: [FINALIZER_RELEASE] },
        spec: { poolName, podName: name },
      } as PodClaim);
      await kube.updateStatus({
        ...c,
        // A steady cluster: the status the controller itself would have written.
        status: {
          phase: 'Bound',
          boundTime: new Date().toISOString(),
          observedGeneration: c.metadata.generation ?? 1,
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Bound',
              message: 'bound',
              lastTransitionTime: new Date().toISOString(),
              observedGeneration: c.metadata.generation ?? 1,
            },
          ],
        },
      });
    },
  );
  say(`created in ${r1((performance.now() - t0) / 1000)} s; starting the controller process ...`);
  const port = await freePort();
  // The production artifact with the runtime flags of its image (packages/controller/Dockerfile).
  const child = spawnShippedController({ kubeconfig: ctx.kubeconfig, namespace: ns, port });
  const tStart = performance.now();
  let peakAll = 0;
  const sampler = setInterval(() => {
    try {
      peakAll = Math.max(peakAll, rssMb(child.pid!));
    } catch {
      // exited
    }
  }, 200);
  await waitFor('controller ready', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, {
    timeoutMs: 300_000,
    intervalMs: 100,
  });
  const syncSeconds = (performance.now() - tStart) / 1000;
  const rssSynced = rssMb(child.pid!);
  const metric = async (name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    let sum = 0;
    for (const l of text.split('\n')) if (l.startsWith(name)) sum += Number(l.split(' ').at(-1));
    return sum;
  };
  // Steady state: every key reconciled once after the sync, queue empty.
  await waitFor(
    'queue drained',
    async () =>
      (await metric('claimkit_reconcile_total')) >= n && (await metric('claimkit_workqueue_depth')) === 0,
    { timeoutMs: 600_000, intervalMs: 500 },
  );
  let peak = rssSynced;
  for (let i = 0; i < 20; i++) {
    peak = Math.max(peak, rssMb(child.pid!));
    await new Promise((r) => setTimeout(r, 500));
  }
  const rssSteady = rssMb(child.pid!);
  const reconciles = await metric('claimkit_reconcile_total');
  // What the drain cost the API server: the controller's requests by verb, kind and code.
  const requests = requestCounts(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
  const drainSeconds = (performance.now() - tStart) / 1000;
  clearInterval(sampler);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await cleanup(ctx, ns);
  return {
    method: `${n} pool pods (unscheduled: schedulerName claimkit-bench-none, never bound to a node, so kwok and the scheduler do nothing) labelled Bound/claimed-by, and ${n} PodClaims Bound to them (finalizer set, status written), created before the controller starts; controller = claimkit-controller as shipped (dist/main.js, node ${CONTROLLER_NODE_FLAGS.join(' ')}, as in its image) in its own process, --namespace; RSS from /proc/<pid>/status VmRSS.`,
    pods: n,
    claims: n,
    cacheSyncSeconds: r1(syncSeconds),
    rssMbAfterSync: rssSynced,
    rssMbSteady: rssSteady,
    rssMbPeakAfterDrain: peak,
    rssMbPeakWhileReconciling: Math.max(peakAll, peak),
    secondsToReconcileAll: r1(drainSeconds),
    reconcilesAfterStart: reconciles,
    requests,
    targetMb: 200,
  };
}
