// A claimed-by label naming a claim that does not hold the pod is removed by whichever claim sees it
// first (the one referencing the pod, or the one the label names). Either way it is a repair of
// someone else's state, so it leaves the same Warning on the pod and on every claim involved
// (as the PV binder's ClaimMisbound does), whatever the order of the reconciles.
import { type EventSpec, event } from '../../api/decision.ts';
import type { Pod, PodClaim } from '../../api/types.ts';

const REASON_FOREIGN_LABEL_REMOVED = 'ForeignLabelRemoved';

/** The Warning on the pod and on each distinct claim (by uid, else name) among `claims`. */
export function foreignLabelEvents(pod: Pod, claims: (PodClaim | undefined)[], message: string): EventSpec[] {
  const seen = new Set<string>();
  const parties: PodClaim[] = [];
  for (const c of claims) {
    if (!c) continue;
    const id = c.metadata.uid ?? c.metadata.name;
    if (seen.has(id)) continue;
    seen.add(id);
    parties.push(c);
  }
  return [pod, ...parties].map((o) => event(o, 'Warning', REASON_FOREIGN_LABEL_REMOVED, message));
}

/** Why a claim dropped its own label from a pod another claim references. */
export function ownLabelOnOthersPodMessage(pod: Pod, labelled: PodClaim, holder: PodClaim): string {
  return (
    `pod ${pod.metadata.name} was labelled for ${labelled.metadata.name}, but claim ` +
    `${holder.metadata.name} references it; the label is removed and ${holder.metadata.name} keeps the pod`
  );
}
