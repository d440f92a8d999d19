// Disruption hints on pool pods: a Bound or Draining pod tells node autoscalers (Karpenter, Cluster
// Autoscaler) not to evict it; an Idle pod carries a pod-deletion-cost instead, so anything that
// scales pods down by cost takes Idle pods first and, among them, the newest first — the order the
// pool's own scale-down uses (podpool.ts: newest Idle pods go first, warm old ones stay).
import {
  ANNOTATION_DELETION_COST,
  ANNOTATION_DO_NOT_DISRUPT,
  ANNOTATION_SAFE_TO_EVICT,
} from '../api/constants.ts';
import { parseTimestamp } from '../api/meta.ts';
import type { Pod } from '../api/types.ts';

/** Costs count seconds from here, so they fit the annotation's int32 for the next ~68 years. */
const COST_EPOCH_MS = Date.UTC(2024, 0, 1);
const INT32_MIN = -2147483648;

/**
 * An Idle pod's deletion cost: minus the seconds between COST_EPOCH and its creation. Always ≤ 0,
 * below a Bound pod's (which carries none, i.e. 0), and lower for newer pods.
 */
export function idleDeletionCost(createdMs: number): number {
  const seconds = Math.floor((createdMs - COST_EPOCH_MS) / 1000);
  return Math.max(INT32_MIN, Math.min(0, -seconds));
}

/** Merge-patch annotations for a pod that becomes (or stays) Bound or Draining. */
export function heldPodHints(): Record<string, string | null> {
  return {
    [ANNOTATION_DO_NOT_DISRUPT]: 'true',
    [ANNOTATION_SAFE_TO_EVICT]: 'false',
    [ANNOTATION_DELETION_COST]: null,
  };
}

/**
 * Merge-patch annotations for a pod going back to Idle: its cost from its creation time, as the
 * pool's scale-down orders by creation (a recycled old pod stays among the warm old ones).
 */
export function idlePodHints(pod: Pod): Record<string, string | null> {
  const created = parseTimestamp(pod.metadata.creationTimestamp) ?? COST_EPOCH_MS;
  return {
    [ANNOTATION_DO_NOT_DISRUPT]: null,
    [ANNOTATION_SAFE_TO_EVICT]: null,
    [ANNOTATION_DELETION_COST]: String(idleDeletionCost(created)),
  };
}

/** The annotations of a pod the pool creates (Idle; `now` stands in for its creation time). */
export function newIdlePodHints(now: number): Record<string, string> {
  return { [ANNOTATION_DELETION_COST]: String(idleDeletionCost(now)) };
}

/** True when a Bound or Draining pod carries both hints (pods bound before claimkit set them do not). */
export function hasHeldPodHints(pod: Pod): boolean {
  const a = pod.metadata.annotations ?? {};
  return a[ANNOTATION_DO_NOT_DISRUPT] === 'true' && a[ANNOTATION_SAFE_TO_EVICT] === 'false';
}
