// spec.disruptionBudget: the pool owns one PodDisruptionBudget, `<pool>-bound`, selecting its Bound
// pods (labels claimkit.dev/pool=<pool>, claimkit.dev/state=Bound), maxUnavailable as given
// (default 0), so voluntary evictions (node drains, cluster autoscaler, Karpenter consolidation)
// wait for the claim's release. Idle pods stay evictable: the pool replaces them. Without the field
// the PDB the pool owns is deleted (one another writer made, not owned by the pool, is left alone).
import { LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import type { Write } from '../api/decision.ts';
import { deepEqual } from '../api/json.ts';
import type { PodDisruptionBudget, PodPool } from '../api/types.ts';
import { poolOwnerReference } from './pods.ts';

export const pdbNameFor = (pool: string): string => `${pool}-bound`;

function desiredPdb(pool: PodPool): PodDisruptionBudget | undefined {
  const budget = pool.spec.disruptionBudget;
  if (!budget) return undefined;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: pdbNameFor(pool.metadata.name),
      namespace: pool.metadata.namespace ?? '',
      labels: { [LABEL_POOL]: pool.metadata.name },
      ownerReferences: [poolOwnerReference(pool)],
    },
    spec: {
      selector: { matchLabels: { [LABEL_POOL]: pool.metadata.name, [LABEL_STATE]: 'Bound' } },
      maxUnavailable: budget.maxUnavailable ?? 0,
    },
  };
}

const ownedBy = (pdb: PodDisruptionBudget, pool: PodPool): boolean =>
  (pdb.metadata.ownerReferences ?? []).some((r) => r.kind === 'PodPool' && r.uid === pool.metadata.uid);

/** The write that makes the cluster's PDB (`current`, from the cache) what the pool asks for, if any. */
export function decideDisruptionBudget(
  pool: PodPool,
  current: PodDisruptionBudget | undefined,
): { write?: Write; conflict?: string } {
  const want = desiredPdb(pool);
  if (!want) {
    if (!current || !ownedBy(current, pool)) return {};
    return {
      write: {
        op: 'delete',
        kind: 'PodDisruptionBudget',
        key: { namespace: current.metadata.namespace ?? '', name: current.metadata.name },
        preconditions: { uid: current.metadata.uid! },
        why: 'spec.disruptionBudget removed',
      },
    };
  }
  if (!current) return { write: { op: 'create', object: want, why: 'spec.disruptionBudget' } };
  if (!ownedBy(current, pool))
    return { conflict: `PodDisruptionBudget ${current.metadata.name} exists and is not owned by the pool` };
  if (
    deepEqual(current.spec.selector, want.spec.selector) &&
    current.spec.maxUnavailable === want.spec.maxUnavailable
  )
    return {};
  // policy/v1 PDB specs are mutable; the update carries the resourceVersion read (Conflict if stale).
  const { minAvailable: _drop, ...spec } = current.spec;
  return {
    write: {
      op: 'update',
      object: {
        ...current,
        spec: { ...spec, selector: want.spec.selector, maxUnavailable: want.spec.maxUnavailable },
      },
      why: 'spec.disruptionBudget changed',
    },
  };
}
