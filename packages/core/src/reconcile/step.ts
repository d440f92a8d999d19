// The one reconcile step every reconciler runs: gather a snapshot, decide, apply the decision's
// writes in order (stopping at the first failure), and turn the outcome into a requeue policy.
import type { ApiError } from '../api/errors.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Client } from '../api/ports.ts';
import { applyDecision, type EventRecorder } from './apply.ts';
import type { Decision } from './decision.ts';
import { SAFETY_RULES, type SafetyRules } from './safety-rules.ts';

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** A conflict, a vanished object or a lost create race is retried at once; anything else is an error. */
export function failedResult(error: ApiError): ReconcileResult {
  if (error.reason === 'Conflict' || error.reason === 'NotFound' || error.reason === 'AlreadyExists') {
    return { requeueAfterMs: 0 };
  }
  throw error;
}

/** What a reconciler is: how it reads its world and how it decides, as two plain functions. */
export interface Reconciler<Deps, Snapshot> {
  gather(deps: Deps, key: ObjectKey): Promise<Snapshot | undefined>;
  decide(snapshot: Snapshot, rules: SafetyRules): Decision;
}

export async function reconcileStep<
  Deps extends { client: Client; recorder?: EventRecorder; rules?: SafetyRules },
  Snapshot,
>(r: Reconciler<Deps, Snapshot>, deps: Deps, key: ObjectKey): Promise<ReconcileResult> {
  const snap = await r.gather(deps, key);
  if (!snap) return {};
  return applyAndRequeue(deps, r.decide(snap, deps.rules ?? SAFETY_RULES));
}

/** Applies a decision and answers with its requeue (or the failure's). */
export async function applyAndRequeue(
  deps: { client: Client; recorder?: EventRecorder },
  d: Decision,
): Promise<ReconcileResult> {
  const res = await applyDecision(deps.client, d, deps.recorder);
  if (res.failed) return failedResult(res.failed.error);
  return d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs };
}
