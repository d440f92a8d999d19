// Condition `Bound` on a PodClaim: True once bound; False with the reason while it waits
// (waiting.ts) or after it lost its pod.
import type { ConditionSpec } from '../../api/conditions.ts';

export const CONDITION_BOUND = 'Bound';

/** What a bind (or a Bound phase repair) writes, in the same status patch as the phase. */
export function boundCondition(podName: string, observedGeneration: number): ConditionSpec {
  return {
    type: CONDITION_BOUND,
    status: 'True',
    reason: 'Bound',
    message: `bound to pod ${podName}`,
    observedGeneration,
  };
}

/** What the Lost write says; a Rebind claim replaces it with its wait reason or a new bind. */
export function podLostCondition(why: string, observedGeneration: number): ConditionSpec {
  return { type: CONDITION_BOUND, status: 'False', reason: 'PodLost', message: why, observedGeneration };
}
