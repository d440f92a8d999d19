// PodClaim reconciler: bind, migrate, release, Lost, finalize — gathered in podclaim/gather.ts,
// decided by the ordered checks of podclaim/decide.ts, applied by the one reconcile step. Its gather
// reads live itself wherever a decision depends on it (P2, P7), so it never asks for a live re-gather.
import type { ObjectKey } from '../../api/meta.ts';
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

export const podClaimReconciler: Reconciler<PodClaimDeps, PodClaimSnapshot> = {
  gather: gatherPodClaim,
  decide: decidePodClaim,
  trace: podClaimTrace,
};

export function reconcilePodClaim(deps: PodClaimDeps, key: ObjectKey): Promise<ReconcileResult> {
  return reconcileStep(podClaimReconciler, deps, key);
}
