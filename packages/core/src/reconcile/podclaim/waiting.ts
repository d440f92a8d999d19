// Why a claim has no pod, said on the claim: condition `Bound` (False, with a reason) and one Event
// per change of reason, never one per reconcile. The condition is written in the same status patch
// as the phase, and only when the phase or the reason changes, so a claim waiting through many
// reconciles costs no writes (its message gives the numbers as of the last change).
import { findCondition, setCondition } from '../../api/conditions.ts';
import { type Decision, event } from '../../api/decision.ts';
import type { PodClaim, PodClaimPhase, PodPool } from '../../api/types.ts';
import { CONDITION_BOUND } from './bound-condition.ts';
import { statusPatch } from './claim-writes.ts';
import { WAIT_MS } from './snapshot.ts';

/** Why a claim is not bound. */
export type WaitReason = 'PoolNotFound' | 'PoolAtMaxPods' | 'NoReadyPod' | 'LostPolicyFail';

export interface Wait {
  reason: WaitReason;
  message: string;
}

/**
 * The reason a claim waiting on `pool` gives, from the pool alone (undefined: not found). Event
 * routing compares it before and after a pool change to wake the pool's waiting claims.
 */
export function poolWaitReason(pool: PodPool | undefined): Exclude<WaitReason, 'LostPolicyFail'> {
  if (!pool) return 'PoolNotFound';
  const total = pool.status?.total ?? 0;
  const idle = pool.status?.idle ?? 0;
  return total >= pool.spec.maxPods && idle === 0 ? 'PoolAtMaxPods' : 'NoReadyPod';
}

/** Why a claim that wants a pod found no candidate, from its pool (undefined: not found). */
export function waitReason(c: PodClaim, pool: PodPool | undefined): Wait {
  const ns = c.metadata.namespace ?? '';
  if (!pool) {
    return {
      reason: 'PoolNotFound',
      message: `PodPool ${c.spec.poolName} does not exist in namespace ${ns}; the claim binds nothing until it does`,
    };
  }
  const total = pool.status?.total ?? 0;
  const idle = pool.status?.idle ?? 0;
  const max = pool.spec.maxPods;
  if (poolWaitReason(pool) === 'PoolAtMaxPods') {
    return {
      reason: 'PoolAtMaxPods',
      message: `pool ${pool.metadata.name} is at maxPods (${total} of ${max} pods, none Idle); waiting for a pod to be released`,
    };
  }
  return {
    reason: 'NoReadyPod',
    message: `no Ready Idle pod in pool ${pool.metadata.name} yet (${idle} Idle of ${total} pods, maxPods ${max}); waiting for one`,
  };
}

/** The claim keeps `phase` and says why in condition Bound; an Event only when the reason changes. */
export function waitDecision(
  c: PodClaim,
  phase: PodClaimPhase,
  wait: Wait,
  now: number,
  requeueAfterMs: number | undefined = WAIT_MS,
): Decision {
  const prev = findCondition(c.status?.conditions, CONDITION_BOUND);
  const reasonChanged = prev?.status !== 'False' || prev.reason !== wait.reason;
  const ready = findCondition(c.status?.conditions, 'Ready');
  const phaseCurrent =
    c.status?.phase === phase &&
    c.status.observedGeneration === (c.metadata.generation ?? 0) &&
    ready?.status === 'False' &&
    ready.reason === phase;
  const d: Decision = { writes: [], events: [] };
  if (reasonChanged || !phaseCurrent) {
    const conditions = setCondition(
      c.status?.conditions,
      {
        type: CONDITION_BOUND,
        status: 'False',
        reason: wait.reason,
        message: wait.message,
        observedGeneration: c.metadata.generation ?? 0,
      },
      now,
    );
    d.writes.push(statusPatch(c, { ...c.status, phase, conditions }, now, wait.message));
  }
  if (reasonChanged) {
    const type = wait.reason === 'NoReadyPod' ? 'Normal' : 'Warning';
    d.events.push(event(c, type, wait.reason, wait.message));
  }
  if (requeueAfterMs !== undefined) d.requeueAfterMs = requeueAfterMs;
  return d;
}

/** lostPolicy Fail: the claim stays Lost and says so; no requeue (only a spec change moves it). */
export function holdLost(c: PodClaim, now: number): Decision {
  const lostAt = c.status?.lostTime ? ` at ${c.status.lostTime}` : '';
  return waitDecision(
    c,
    'Lost',
    {
      reason: 'LostPolicyFail',
      message: `the claim lost its pod${lostAt}; lostPolicy is Fail, so it stays Lost and binds no fresh pod (set spec.lostPolicy to Rebind to bind one)`,
    },
    now,
    undefined,
  );
}
