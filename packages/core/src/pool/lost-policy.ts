// spec.lostPolicy: Rebind (the default) binds a Lost claim to a fresh pod; Fail keeps it Lost, for
// users whose pod held state they cannot lose. The policy is mutable: switching Fail -> Rebind is
// how a user lets a failed claim bind again.
import type { PodClaim } from '../api/types.ts';

export const lostPolicyOf = (c: PodClaim): 'Rebind' | 'Fail' => c.spec.lostPolicy ?? 'Rebind';

/**
 * Set on a lostPolicy Fail claim by the very write that clears its podName (the Lost write), so
 * "this claim lost its pod" is as durable as the cleared reference itself: a status write that did
 * not land, or a stale replica's status patch, cannot make the claim look never bound.
 */
const ANNOTATION_LOST_AT = 'claimkit.dev/lost-at';

/**
 * A claim with lostPolicy Fail that has lost its pod: it has no pod and was bound before. Phase is
 * derived state; the annotation is the durable mark, a bind time or a phase past Pending count too.
 */
export function isLostForGood(c: PodClaim): boolean {
  if (lostPolicyOf(c) !== 'Fail' || c.spec.podName) return false;
  const phase = c.status?.phase;
  return (
    c.metadata.annotations?.[ANNOTATION_LOST_AT] !== undefined ||
    Boolean(c.status?.boundTime) ||
    phase === 'Lost' ||
    phase === 'Bound' ||
    phase === 'Migrating'
  );
}

/** The claim marked Lost for good (Fail), to go in the write that clears its podName. */
export function markedLost(c: PodClaim, now: string): PodClaim {
  if (lostPolicyOf(c) !== 'Fail') return c;
  return {
    ...c,
    metadata: { ...c.metadata, annotations: { ...c.metadata.annotations, [ANNOTATION_LOST_AT]: now } },
  };
}

/** The claim without the mark (a bind after a Fail -> Rebind recovery), in the bind's own write. */
export function unmarkedLost(c: PodClaim): PodClaim {
  if (c.metadata.annotations?.[ANNOTATION_LOST_AT] === undefined) return c;
  const annotations = { ...c.metadata.annotations };
  delete annotations[ANNOTATION_LOST_AT];
  return { ...c, metadata: { ...c.metadata, annotations } };
}
