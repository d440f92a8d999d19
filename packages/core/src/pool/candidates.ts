// Candidate choice for binding: Idle, same pool, unreferenced, Ready, not deleting; stable order by
// full creationTimestamp then name, so replicas deciding from one snapshot pick the same pod.
import type { Pod } from '../api/types.ts';
import { byCreationThenName } from '../capture/candidates.ts';
import type { ClaimIndex } from './claim-index.ts';
import { isIdleAndReady, poolOf } from './pods.ts';

export function bindCandidates(pool: string, pods: Pod[], index: ClaimIndex): Pod[] {
  return pods
    .filter(
      (p) =>
        poolOf(p) === pool &&
        isIdleAndReady(p) &&
        !index.isReferenced(p.metadata.namespace ?? '', p.metadata.name),
    )
    .sort(byCreationThenName);
}
