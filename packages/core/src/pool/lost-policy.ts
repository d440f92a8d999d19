// spec.lostPolicy: Rebind (the default) binds a Lost claim to a fresh pod; Fail keeps it Lost, for
// users whose pod held state they cannot lose. The policy is mutable: switching Fail -> Rebind is
// how a user lets a failed claim bind again.
import type { PodClaim } from '../api/types.ts';

export const lostPolicyOf = (c: PodClaim): 'Rebind' | 'Fail' => c.spec.lostPolicy ?? 'Rebind';

/**
 * A claim with lostPolicy Fail that has lost its pod: it has no pod and was bound before. Phase is
 * derived state, so a bind time (or a phase past Pending) counts too: a Lost write whose status
 * half did not land must not let the claim bind a fresh pod.
 */
export function isLostForGood(c: PodClaim): boolean {
  if (lostPolicyOf(c) !== 'Fail' || c.spec.podName) return false;
  const phase = c.status?.phase;
  return Boolean(c.status?.boundTime) || phase === 'Lost' || phase === 'Bound' || phase === 'Migrating';
}
