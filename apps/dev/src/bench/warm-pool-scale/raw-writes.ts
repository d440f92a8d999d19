// Raw writes in the same run, the controller still watching: ConfigMap creates (nothing watches them
// but the API server's own caches) and merge patches of the pools' Bound pods' annotations (the
// write a bind makes first, with every pod watcher still there).
import { podNameOf } from '@claimkit/core';
import { rawConfigMapCreatesPerSec, rawPodPatchesPerSecOf } from '../context.ts';
import type { Phase } from './phase.ts';

export interface RawWrites {
  /** Writes in flight. */
  concurrency: number;
  /** ConfigMap creates made. */
  writes: number;
  configMapCreatesPerSec: number;
  /** Bound pods patched. */
  podsPatched: number;
  podPatchesPerSec: number;
  /** Claims the bench's watches saw. */
  claimsObserved: number;
  /** The controllers' /metrics at the end of the run. */
  metricsEnd: string;
  rssMb: number;
}

export async function rawWrites({ ctx, o, run, view, controllers }: Phase): Promise<RawWrites> {
  const concurrency = Math.max(16, o.concurrency * 2);
  const writes = Math.min(o.rawWrites, run.maxPods);
  const configMapCreatesPerSec = await rawConfigMapCreatesPerSec(ctx, run.ns, writes, concurrency);
  const claimsObserved = [...view.claims.values()].length;
  const podNames = (await Promise.all(run.namespaces.map((n) => ctx.kube.list('PodClaim', { namespace: n }))))
    .flatMap((l) => l.items)
    .filter((c) => !!podNameOf(c))
    .map((c) => ({ namespace: c.metadata.namespace!, name: podNameOf(c)! }))
    .slice(0, writes);
  const podPatchesPerSec = await rawPodPatchesPerSecOf(ctx, podNames, concurrency);
  const metricsEnd = await controllers.scrape();
  return {
    concurrency,
    writes,
    configMapCreatesPerSec,
    podsPatched: podNames.length,
    podPatchesPerSec,
    claimsObserved,
    metricsEnd,
    rssMb: controllers.rssNow(),
  };
}
