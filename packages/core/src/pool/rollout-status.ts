// What a PodPool's status says about its template rollout and its scale subresource: counts of
// pods of the current and of outdated templates, the current hash, the pods' label selector (HPA
// and KEDA read it through /scale) and the TemplateUpToDate condition.
import type { ConditionSpec } from '../api/conditions.ts';
import { LABEL_POOL } from '../api/constants.ts';
import type { PodPool, PodPoolStatus } from '../api/types.ts';

const CONDITION_TEMPLATE_UP_TO_DATE = 'TemplateUpToDate';

/** The label selector of a pool's pods in string form (the scale subresource's selector). */
const poolSelector = (pool: PodPool): string => `${LABEL_POOL}=${pool.metadata.name}`;

/** A pool's non-deleting pods counted by template: all of them, outdated ones, outdated Idle ones. */
export interface TemplateCounts {
  total: number;
  outdated: number;
  /** Outdated pods labelled Idle. */
  outdatedIdle: number;
}

/** Status fields of the rollout and the scale subresource, from the pool's non-deleting pods' counts. */
export function rolloutStatus(
  pool: PodPool,
  counts: TemplateCounts,
  hash: string,
): Pick<PodPoolStatus, 'updated' | 'outdated' | 'templateHash' | 'selector'> {
  return {
    updated: counts.total - counts.outdated,
    outdated: counts.outdated,
    templateHash: hash,
    selector: poolSelector(pool),
  };
}

/**
 * True when every pod is of the current template. While outdated Idle pods remain the rollout is in
 * progress; when only outdated Bound/Draining pods remain they wait for their claims' release.
 */
export function templateCondition(pool: PodPool, counts: TemplateCounts, hash: string): ConditionSpec {
  const { total, outdated, outdatedIdle } = counts;
  const outdatedHeld = outdated - outdatedIdle;
  const observedGeneration = pool.metadata.generation ?? 0;
  if (outdated === 0)
    return {
      type: CONDITION_TEMPLATE_UP_TO_DATE,
      status: 'True',
      reason: 'AllPodsUpdated',
      message: `all ${total} pods are of template ${hash}`,
      observedGeneration,
    };
  return {
    type: CONDITION_TEMPLATE_UP_TO_DATE,
    status: 'False',
    reason: outdatedIdle > 0 ? 'RolloutInProgress' : 'OutdatedPodsBound',
    message:
      `${outdated} of ${total} pods are of an outdated template (${outdatedIdle} Idle being replaced, ` +
      `${outdatedHeld} claimed, deleted on release); current template ${hash}`,
    observedGeneration,
  };
}
