// PodClaim reconciler: bind, migrate, release, Lost, finalize — gathered in podclaim/gather.ts,
// decided by the ordered checks of podclaim/decide.ts, applied by the one reconcile step. Its gather
// reads live itself wherever a decision depends on it (P2, P7), so it never asks for a live re-gather.
import { type Decision, writeTarget } from '../../api/decision.ts';
import type { ObjectKey } from '../../api/meta.ts';
import type { Pod } from '../../api/types.ts';
import { holderOf } from '../../pool/binds-in-flight.ts';
import { isIdleAndReady } from '../../pool/pods.ts';
import { type ApplyResult, applyDecision } from '../apply.ts';
import { type ReconcileResult, type Reconciler, reconcileStep } from '../step.ts';
import { decidePodClaim } from './decide.ts';
import type { PodClaimDeps } from './deps.ts';
import { gatherPodClaim } from './gather.ts';
import type { PodClaimSnapshot } from './snapshot.ts';
import { podClaimTrace } from './trace.ts';

export { decidePodClaim } from './decide.ts';
export { gatherPodClaim } from './gather.ts';
export { judgeReferencedPod, type PodHold } from './hold.ts';
export * from './snapshot.ts';

/**
 * The Idle pods a decision writes to, with the index of that write: the pods it binds (or starts a
 * migration to). Any other pod write is to a pod the claim already holds or releases.
 */
function bindTargets(d: Decision, s: PodClaimSnapshot): { pod: Pod; at: number }[] {
  const out: { pod: Pod; at: number }[] = [];
  d.writes.forEach((w, at) => {
    const { kind, key } = writeTarget(w);
    if ((w.op !== 'patch' && w.op !== 'update') || kind !== 'Pod') return;
    const pod = s.pods.find((p) => p.metadata.name === key.name);
    if (pod && isIdleAndReady(pod)) out.push({ pod, at });
  });
  return out;
}

/**
 * Applies a decision as every reconciler does, holding the pods it binds in the process's binds in
 * flight (pool/binds-in-flight.ts) from before the pod's write until the cache shows it changed;
 * a pod write that failed releases its pod at once.
 */
async function applyPodClaimDecision(
  deps: PodClaimDeps,
  d: Decision,
  s: PodClaimSnapshot,
): Promise<ApplyResult> {
  const binds = deps.bindsInFlight;
  const targets = binds ? bindTargets(d, s) : [];
  if (!binds || targets.length === 0) return applyDecision(deps.client, d, deps.recorder);
  const claim = holderOf(s.claim);
  const now = deps.now();
  for (const t of targets) binds.hold(t.pod, claim, now);
  const result = await applyDecision(deps.client, d, deps.recorder);
  if (result.failed) for (const t of targets) if (t.at >= result.applied) binds.release(t.pod, claim);
  return result;
}

export const podClaimReconciler: Reconciler<PodClaimDeps, PodClaimSnapshot> = {
  gather: gatherPodClaim,
  decide: decidePodClaim,
  apply: applyPodClaimDecision,
  trace: podClaimTrace,
};

export function reconcilePodClaim(deps: PodClaimDeps, key: ObjectKey): Promise<ReconcileResult> {
  return reconcileStep(podClaimReconciler, deps, key);
}
