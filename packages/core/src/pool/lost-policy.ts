// spec.lostPolicy: Rebind (the default) binds a Lost claim to a fresh pod; Fail keeps it Lost, for
// users whose pod held state they cannot lose. The policy is mutable: switching Fail -> Rebind is
// how a user lets a failed claim bind again.
import { podNameOf } from '../api/claim-binding.ts';
import type { PodClaim } from '../api/types.ts';

export const lostPolicyOf = (c: PodClaim): 'Rebind' | 'Fail' => c.spec.lostPolicy ?? 'Rebind';

/**
 * The mark an earlier release set on a lostPolicy Fail claim in the write that cleared its podName
 * (then in spec): read while the controller moves such claims (reconcile/podclaim/legacy-binding.ts),
 * which turns it into status.lostTime. The binding and lostTime are now one status write.
 */
export const ANNOTATION_LOST_AT = 'claimkit.dev/lost-at';

/**
 * A claim with lostPolicy Fail that has lost its pod: it has no pod and was bound before. Phase is
 * derived state; boundTime and lostTime, written with the binding in its CAS, are the durable marks.
 */
export function isLostForGood(c: PodClaim): boolean {
  if (lostPolicyOf(c) !== 'Fail' || podNameOf(c)) return false;
  const phase = c.status?.phase;
  return (
    c.metadata.annotations?.[ANNOTATION_LOST_AT] !== undefined ||
    Boolean(c.status?.boundTime) ||
    Boolean(c.status?.lostTime) ||
    phase === 'Lost' ||
    phase === 'Bound' ||
    phase === 'Migrating'
  );
}
