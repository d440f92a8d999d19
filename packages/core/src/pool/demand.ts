// A pool's demand as its scaling counts it (DESIGN.md "PodPool": claims waiting on a pool are demand;
// scale-down never deletes an Idle pod a waiting claim could take). The pool reads pods and claims
// from two informers that lag each other; a bind writes the pod first (CAS), then the claim's
// spec.podName. Either half of a bind in flight can be missing from the pool's view, and each must
// count once, as a taken pod, never as an Idle pod plus no demand (the pool then deleted Idle pods and
// created new ones for claims that were already waiting) nor as an Idle pod missing plus a waiting
// claim (a pod created for a claim that has one):
// - a pod some live claim references (spec.podName or spec.sourcePod) is taken, whatever its labels
//   say: the pod cache has not shown the bind's pod write yet (and a pod a claim references is that
//   claim's to fix, P7, never the pool's to scale down);
// - a claim without spec.podName that a live pool pod is labelled for (name and UID) is not waiting:
//   its pod is taken, the claim cache has not shown its spec write yet (or its bind is resuming);
// - a lostPolicy Fail claim that lost its pod never binds again by itself (L1): not demand.
import type { Pod, PodClaim } from '../api/types.ts';
import type { ClaimIndex } from './claim-index.ts';
import { isLostForGood } from './lost-policy.ts';
import { claimedBy, isClaimedBy } from './pods.ts';

/** Whether a claim `references` (over the pool's claims) holds this pod: it is not Idle, whatever its labels say. */
export function isTakenByReference(pod: Pod, references: ClaimIndex): boolean {
  return references.isReferenced(pod.metadata.namespace ?? '', pod.metadata.name);
}

/**
 * The claims waiting on pool `poolName`: on the pool, no spec.podName, not deleting, not lost for
 * good, and no live pod of `pods` (the pool's, as its cache shows them) labelled for them.
 */
export function waitingClaims(
  poolName: string,
  pods: readonly Pod[],
  claims: readonly PodClaim[],
): PodClaim[] {
  const candidates = claims.filter(
    (c) =>
      c.spec.poolName === poolName && !c.spec.podName && !c.metadata.deletionTimestamp && !isLostForGood(c),
  );
  if (candidates.length === 0) return candidates;
  // Labelled pods by claim name (normally one each), so the check is O(pods + claims).
  const labelled = new Map<string, Pod[]>();
  for (const p of pods) {
    const owner = claimedBy(p);
    if (owner === undefined || p.metadata.deletionTimestamp) continue;
    const list = labelled.get(owner);
    if (list) list.push(p);
    else labelled.set(owner, [p]);
  }
  return candidates.filter((c) => !(labelled.get(c.metadata.name) ?? []).some((p) => isClaimedBy(p, c)));
}
