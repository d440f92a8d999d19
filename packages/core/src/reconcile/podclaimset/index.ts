// PodClaimSet reconciler: gathered in podclaimset/gather.ts (live before it creates or deletes),
// decided in podclaimset/decide.ts, applied by the one reconcile step.
import type { ObjectKey } from '../../api/meta.ts';
import { type ReconcileResult, type Reconciler, reconcileStep } from '../step.ts';
import { decidePodClaimSet, type PodClaimSetSnapshot } from './decide.ts';
import { gatherPodClaimSet, type PodClaimSetDeps } from './gather.ts';

export * from './decide.ts';
export * from './gather.ts';

export const podClaimSetReconciler: Reconciler<PodClaimSetDeps, PodClaimSetSnapshot> = {
  gather: gatherPodClaimSet,
  decide: decidePodClaimSet,
};

export function reconcilePodClaimSet(deps: PodClaimSetDeps, key: ObjectKey): Promise<ReconcileResult> {
  return reconcileStep(podClaimSetReconciler, deps, key);
}
