// P8: a pool never has more than maxPods pods, terminating ones included (they still hold a node's
// resources). One controller replica keeps it after every write (expectations hold its creates until
// its cache shows them). Two replicas deciding at once from caches that do not show each other's
// creates can briefly exceed it (a create is not a compare-and-swap); the excess Idle pods are then
// deleted, so with several replicas it is a convergence invariant: it holds once they are quiet.
import type { Pod, PodPool } from '../api/types.ts';
import { poolOf } from '../pool/pods.ts';
import type { Violation } from './check.ts';

export function checkPoolSizes(pools: PodPool[], pods: Pod[]): Violation[] {
  const counts = new Map<string, number>();
  for (const p of pods) {
    const pool = poolOf(p);
    if (pool === undefined) continue;
    const k = `${p.metadata.namespace ?? ''}/${pool}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const out: Violation[] = [];
  for (const pool of pools) {
    const k = `${pool.metadata.namespace ?? ''}/${pool.metadata.name}`;
    const n = counts.get(k) ?? 0;
    if (n > pool.spec.maxPods) {
      out.push({
        invariant: 'P8',
        message: `pool ${pool.metadata.name} has ${n} pods (terminating included), more than maxPods ${pool.spec.maxPods}`,
        objects: [`PodPool/${k}`],
      });
    }
  }
  return out;
}
