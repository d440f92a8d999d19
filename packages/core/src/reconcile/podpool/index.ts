// PodPool reconciler: gathered in podpool/gather.ts (the cache, live before residue is released),
// decided in podpool/decide.ts, applied in podpool/apply.ts (slow-start create batches, every
// create and delete recorded in the process's expectations) by the one reconcile step.
import type { ObjectKey } from '../../api/meta.ts';
import { PoolExpectations } from '../../pool/expectations.ts';
import { type ReconcileResult, type Reconciler, reconcileStep } from '../step.ts';
import { applyPoolDecision } from './apply.ts';
import { decidePodPool, type PodPoolSnapshot } from './decide.ts';
import { gatherPodPool, type PodPoolDeps } from './gather.ts';

export * from './apply.ts';
export * from './decide.ts';
export * from './gather.ts';

export const podPoolReconciler: Reconciler<PodPoolDeps, PodPoolSnapshot> = {
  gather: gatherPodPool,
  decide: decidePodPool,
  apply: (deps, d, s) =>
    applyPoolDecision(
      {
        client: deps.client,
        // Without the process's expectations, this reconcile's are dropped with it (see PodPoolDeps).
        expectations: deps.expectations ?? new PoolExpectations(),
        poolUid: s.pool.metadata.uid ?? '',
        now: deps.now,
        ...(deps.recorder ? { recorder: deps.recorder } : {}),
        ...(deps.statusPacer ? { statusPacer: deps.statusPacer } : {}),
      },
      d,
    ),
};

export function reconcilePodPool(deps: PodPoolDeps, key: ObjectKey): Promise<ReconcileResult> {
  return reconcileStep(podPoolReconciler, deps, key);
}
