// What a PodPool's status says about its template rollout and its scale subresource: counts of
// pods of the current and of outdated templates, the current hash, the pods' label selector (HPA
// and KEDA read it through /scale) and the TemplateUpToDate condition.
import type { ConditionSpec } from '../api/conditions.ts';
import { LABEL_POOL } from '../api/constants.ts';
import type { Pod, PodPool, PodPoolStatus } from '../api/types.ts';
import { stateOf } from './pods.ts';
import { isUpdatedPod } from './template-hash.ts';

const CONDITION_TEMPLATE_UP_TO_DATE = 'TemplateUpToDate';

/** The label selector of a pool's pods in string form (the scale subresource's selector). */
const poolSelector = (pool: PodPool): string => `${LABEL_POOL}=${pool.metadata.name}`;

/** Status fields of the rollout and the scale subresource; `pods` are the pool's non-deleting pods. */
export function rolloutStatus(
  pool: PodPool,
  pods: Pod[],
  hash: string,
): Pick<PodPoolStatus, 'updated' | 'outdated' | 'templateHash' | 'selector'> {
  const updated = pods.filter((p) => isUpdatedPod(p, hash)).length;
  return { updated, outdated: pods.length - updated, templateHash: hash, selector: poolSelector(pool) };
}

/**
 * True when every pod is of the current template. While outdated Idle pods remain the rollout is in
 * progress; when only outdated Bound/Draining pods remain they wait for their claims' release.
 */
export function templateCondition(pool: PodPool, pods: Pod[], hash: string): ConditionSpec {
  const outdated = pods.filter((p) => !isUpdatedPod(p, hash));
  const outdatedIdle = outdated.filter((p) => stateOf(p) === 'Idle').length;
  const outdatedHeld = outdated.length - outdatedIdle;
  const observedGeneration = pool.metadata.generation ?? 0;
  if (outdated.length === 0)
    return {
      type: CONDITION_TEMPLATE_UP_TO_DATE,
      status: 'True',
      reason: 'AllPodsUpdated',
      message: `all ${pods.length} pods are of template ${hash}`,
      observedGeneration,
    };
  return {
    type: CONDITION_TEMPLATE_UP_TO_DATE,
    status: 'False',
    reason: outdatedIdle > 0 ? 'RolloutInProgress' : 'OutdatedPodsBound',
    message:
      `${outdated.length} of ${pods.length} pods are of an outdated template (${outdatedIdle} Idle being replaced, ` +
      `${outdatedHeld} claimed, deleted on release); current template ${hash}`,
    observedGeneration,
  };
}
