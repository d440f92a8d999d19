// Template rollout of a pool's Idle pods (DESIGN.md "PodPool"): Idle pods of an outdated template
// do not count toward the Idle target, so current ones are created next to them (a surge bounded by
// maxPods); an outdated Idle pod goes only once enough current Idle pods are Ready to keep the target
// without it. When maxPods leaves no room to surge, one outdated pod at a time makes room.
// Outdated Bound pods are not touched: their release deletes them (template-hash.ts).
import { parseTimestamp } from '../api/meta.ts';
import { isPodReady } from '../api/pod-predicates.ts';
import type { Pod } from '../api/types.ts';
import { isUpdatedPod } from './template-hash.ts';

const created = (p: Pod): number => parseTimestamp(p.metadata.creationTimestamp) ?? 0;
const byName = (a: Pod, b: Pod): number => (a.metadata.name < b.metadata.name ? -1 : 1);

/**
 * Scale-down order of Idle pods: outdated before current, not-Ready before Ready, then newest
 * first (warm old pods stay), so an excess removes what serves least.
 */
export function scaleDownOrder(idle: Pod[], templateHash: string): Pod[] {
  // Keys computed once per pod, not once per comparison (a pool reconcile sorts thousands).
  const keyed = idle.map((pod) => ({
    pod,
    rank: (isUpdatedPod(pod, templateHash) ? 2 : 0) + (isPodReady(pod) ? 1 : 0),
    created: created(pod),
  }));
  keyed.sort((a, b) => a.rank - b.rank || b.created - a.created || byName(b.pod, a.pod));
  return keyed.map((k) => k.pod);
}

export interface RolloutInput {
  /** Idle, unclaimed, not-deleting pods of the pool. */
  idle: Pod[];
  templateHash: string;
  /** The Idle target (minIdle plus pending claims, within maxPods). */
  desiredIdle: number;
  /** True when this round may still create a pod (the pool is below maxPods). */
  roomToCreate: boolean;
  /** Pods this round already deletes (scale-down), not to be chosen twice. */
  alreadyDeleting: ReadonlySet<string>;
}

/** Outdated Idle pods that can go now without the Ready Idle count dropping below the target. */
export function outdatedIdleToDelete(x: RolloutInput): Pod[] {
  const left = x.idle.filter((p) => !x.alreadyDeleting.has(p.metadata.name));
  const outdated = left.filter((p) => !isUpdatedPod(p, x.templateHash));
  if (outdated.length === 0) return [];
  const current = left.filter((p) => isUpdatedPod(p, x.templateHash));
  const readyCurrent = current.filter(isPodReady).length;
  // The outdated pods kept are the ones that serve best: Ready first, then oldest.
  const keepOrder = [...scaleDownOrder(outdated, x.templateHash)].reverse();
  const keep = Math.max(0, x.desiredIdle - readyCurrent);
  const victims = keepOrder.slice(keep);
  // No room to surge and no current pod warming: without a delete the rollout never moves.
  const warming = current.length > readyCurrent;
  if (victims.length === 0 && !x.roomToCreate && !warming) return keepOrder.slice(-1);
  return victims;
}
