// P8: a pool never has more than maxPods pods, terminating ones included (they still hold a node's
// resources). One controller replica keeps it after every write (expectations hold its creates until
// its cache shows them). Several replicas active at once (leader election off, or a leadership
// hand-over) do not see each other's expectations, and a create is not a compare-and-swap: each can
// create from a cache that does not show the other's creates, so the pool can exceed maxPods; claims
// may bind the excess before it is scaled down. What converges then: once the replicas are quiet no
// Idle pod is left while the pool is above maxPods (excess Idle pods are deleted; excess held by
// claims goes as they release). checkPoolSizes is the strict form, checkPoolExcessIdle the other.

import { isDeleting } from '../api/pod-predicates.ts';
import type { Pod, PodPool } from '../api/types.ts';
import { claimedBy, poolOf, stateOf } from '../pool/pods.ts';
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

/** With several replicas, once quiet: a pool above maxPods (not counting terminating pods) has no Idle pod left. */
export function checkPoolExcessIdle(pools: PodPool[], pods: Pod[]): Violation[] {
  const out: Violation[] = [];
  for (const pool of pools) {
    const ns = pool.metadata.namespace ?? '';
    const live = pods.filter(
      (p) => (p.metadata.namespace ?? '') === ns && poolOf(p) === pool.metadata.name && !isDeleting(p),
    );
    const idle = live.filter((p) => stateOf(p) === 'Idle' && claimedBy(p) === undefined);
    if (live.length > pool.spec.maxPods && idle.length > 0) {
      out.push({
        invariant: 'P8',
        message: `pool ${pool.metadata.name} has ${live.length} pods, more than maxPods ${pool.spec.maxPods}, and still ${idle.length} Idle (${idle.map((p) => p.metadata.name).join(', ')})`,
        objects: [`PodPool/${ns}/${pool.metadata.name}`],
      });
    }
  }
  return out;
}
