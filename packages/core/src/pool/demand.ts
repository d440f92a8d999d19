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
// - a claim without spec.podName with a bind in flight (a Bound pod labelled for it that no claim
//   references: isBindInFlight) is not waiting: its bind's claim write is not shown, or not made yet;
// - a lostPolicy Fail claim that lost its pod never binds again by itself (L1): not demand.
import { bindingOf, podNameOf } from '../api/claim-binding.ts';
import { isDeleting, isPodFinished } from '../api/pod-predicates.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import type { ClaimIndex } from './claim-index.ts';
import { isLostForGood as lostForGood } from './lost-policy.ts';
import { claimedBy, isClaimedBy, stateOf } from './pods.ts';

/**
 * A bind in flight for claim `c`: a pod labelled for it (name and UID) by the bind's CAS that no claim
 * references yet, Bound, not deleting, not finished. The claim adopts it on its next reconcile ("resume
 * bind", podclaim/decide.ts) unless its claim write lands first. A pod the claim references as its
 * sourcePod (a migration whose target was lost) is not one: that claim needs a new pod.
 */
function isBindInFlight(p: Pod, c: PodClaim, references: ClaimIndex): boolean {
  return (
    isClaimedBy(p, c) &&
    !isDeleting(p) &&
    stateOf(p) === 'Bound' &&
    !isPodFinished(p) &&
    !references.isReferenced(p.metadata.namespace ?? '', p.metadata.name)
  );
}

/**
 * The claims waiting on pool `poolName`: on the pool, no spec.podName, not deleting, not lost for
 * good, and no bind in flight among `pods` (the pool's, as its cache shows them). `references` indexes
 * `claims`; `isLostForGood` is the rules' (a test may break it).
 */
export function waitingClaims(
  poolName: string,
  pods: readonly Pod[],
  claims: readonly PodClaim[],
  references: ClaimIndex,
  isLostForGood: (c: PodClaim) => boolean = lostForGood,
): PodClaim[] {
  const candidates = claims.filter(
    (c) =>
      c.spec.poolName === poolName && !podNameOf(c) && !c.metadata.deletionTimestamp && !isLostForGood(c),
  );
  if (candidates.length === 0) return candidates;
  // Labelled pods by claim name (normally none or one each): one pass over the pods.
  const labelled = new Map<string, Pod[]>();
  for (const p of pods) {
    const owner = claimedBy(p);
    if (owner === undefined) continue;
    const list = labelled.get(owner);
    if (list) list.push(p);
    else labelled.set(owner, [p]);
  }
  return candidates.filter(
    (c) => !(labelled.get(c.metadata.name) ?? []).some((p) => isBindInFlight(p, c, references)),
  );
}

/**
 * Names of the pods in `namespace` that non-deleting claims reference: what isTakenByReference asks,
 * answered with one set lookup per pod (asked for every Idle pod of the pool on each reconcile).
 */
export function referencedPodNames(claims: readonly PodClaim[], namespace: string): Set<string> {
  const out = new Set<string>();
  for (const c of claims) {
    if (c.metadata.deletionTimestamp || (c.metadata.namespace ?? '') !== namespace) continue;
    const { podName, sourcePod } = bindingOf(c);
    if (podName) out.add(podName);
    if (sourcePod) out.add(sourcePod);
  }
  return out;
}
