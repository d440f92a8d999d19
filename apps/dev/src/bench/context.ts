// What every benchmark shares: the cluster's clients, a namespace of its own (deleted after, and
// waited for), a bounded-concurrency loop, pods for kwok, and the latency summary.
import { kubeClient } from '@claimkit/controller';
import type { Pod } from '@claimkit/core';
import { type Clients, waitFor } from '@claimkit/e2e/harness';

export type Kube = ReturnType<typeof kubeClient>;

export interface BenchContext {
  kubeconfig: string;
  /** client-node clients (namespaces, service accounts). */
  admin: Clients;
  /** claimkit's own client (typed objects, watches). */
  kube: Kube;
  say: (msg: string) => void;
  /** etcd's client URL, when the bench started the control plane (its /metrics for the window probe). */
  etcdUrl?: string;
}

export function benchContext(
  kubeconfig: string,
  admin: Clients,
  say: (msg: string) => void,
  etcdUrl?: string,
): BenchContext {
  return {
    kubeconfig,
    admin,
    kube: kubeClient(kubeconfig, { timeoutMs: 60_000 }),
    say,
    ...(etcdUrl ? { etcdUrl } : {}),
  };
}

/** A fresh namespace (labelled claimkit.dev/bench) whose default ServiceAccount exists. */
export async function benchNamespace(ctx: BenchContext, prefix: string): Promise<string> {
  const name = `${prefix}-${Date.now().toString(36)}`;
  await ctx.admin.core.createNamespace({
    body: { metadata: { name, labels: { 'claimkit.dev/bench': 'true' } } },
  });
  await waitFor(`sa default/${name}`, () =>
    ctx.admin.core.readNamespacedServiceAccount({ name: 'default', namespace: name }),
  );
  return name;
}

/**
 * Deletes a bench namespace (the claims' finalizers are stripped first) and waits until it is gone
 * (at most 2 min), so that the next benchmark does not share the API server with its deletion.
 */
export async function cleanup(ctx: BenchContext, ns: string): Promise<void> {
  const claims = (await ctx.kube.list('PodClaim', { namespace: ns })).items;
  await forEachConcurrently(claims, 32, (c) =>
    ctx.kube
      .patch('PodClaim', { namespace: ns, name: c.metadata.name }, { metadata: { finalizers: null } })
      .catch(() => {}),
  );
  await ctx.admin.core.deleteNamespace({ name: ns }).catch(() => {});
  await waitFor(
    `namespace ${ns} deleted`,
    async () => {
      try {
        await ctx.admin.core.readNamespace({ name: ns });
        return false;
      } catch {
        return true;
      }
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  ).catch(() => ctx.say(`namespace ${ns} still terminating after 2 min; going on`));
}

/** Runs fn over items with `n` in flight. */
export async function forEachConcurrently<T>(
  items: T[],
  n: number,
  fn: (x: T, i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

export const podFor = (
  name: string,
  ns: string,
  labels: Record<string, string>,
  extra: Partial<Pod['spec']> = {},
): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns, labels },
  spec: {
    containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
    terminationGracePeriodSeconds: 0,
    ...extra,
  } as Pod['spec'],
});

export const isReady = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

/** Rounded to one decimal. */
export const r1 = (x: number) => Math.round(x * 10) / 10;

/** Latencies in ms: count, p50, p99, max, mean. */
export const summary = (xs: number[]) => ({
  n: xs.length,
  p50Ms: r1(pct(xs, 50)),
  p99Ms: r1(pct(xs, 99)),
  maxMs: r1(Math.max(...xs)),
  meanMs: r1(xs.reduce((a, b) => a + b, 0) / xs.length),
});

/**
 * Raw single-object writes from the bench's client, `concurrency` in flight: `n` ConfigMap creates
 * (the cheapest write there is, nothing watches them), per second.
 */
export async function rawConfigMapCreatesPerSec(
  ctx: BenchContext,
  ns: string,
  n: number,
  concurrency: number,
): Promise<number> {
  const t0 = performance.now();
  await forEachConcurrently(
    Array.from({ length: n }, (_, i) => i),
    concurrency,
    (i) =>
      ctx.kube.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `raw-${i}`, namespace: ns },
        data: { i: String(i) },
      }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/**
 * Raw merge patches of these pods' annotations (the write a bind makes first, with every pod
 * watcher — scheduler, kwok, controller-manager — still there), `concurrency` in flight, per second.
 */
export async function rawPodPatchesPerSec(
  ctx: BenchContext,
  ns: string,
  podNames: string[],
  concurrency: number,
): Promise<number> {
  return rawPodPatchesPerSecOf(
    ctx,
    podNames.map((name) => ({ namespace: ns, name })),
    concurrency,
  );
}

/** rawPodPatchesPerSec over pods in any namespaces. */
export async function rawPodPatchesPerSecOf(
  ctx: BenchContext,
  pods: Array<{ namespace: string; name: string }>,
  concurrency: number,
): Promise<number> {
  const t0 = performance.now();
  await forEachConcurrently(pods, concurrency, (ref) =>
    ctx.kube.patch('Pod', ref, { metadata: { annotations: { 'bench.claimkit.dev/raw': String(t0) } } }),
  );
  return pods.length / ((performance.now() - t0) / 1000);
}
