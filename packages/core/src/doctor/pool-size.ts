// CK014 PoolOverCreated: a pool with more pods than maxPods (terminating included), or more Idle
// pods than its target (minIdle plus one per Pending claim). Doctor cannot see a controller's
// in-flight expectations, so it counts only pods older than OVER_CREATED_GRACE_MS (the expectations'
// TTL: anything younger may still be a create or delete the controller is waiting to observe), and
// reports Idle excess only when the pool's own status agrees (the controller saw it too and did not
// act), so a release being scaled down right now is not a finding. Not fixable by doctor: the
// controller deletes excess Idle pods; a finding that stays means it is not doing so.
import { podNameOf } from '../api/claim-binding.ts';
import { parseTimestamp } from '../api/meta.ts';
import { isDeleting } from '../api/pod-predicates.ts';
import type { Pod, PodClaim, PodPool } from '../api/types.ts';
import { EXPECTATIONS_TTL_MS } from '../pool/expectations.ts';
import { claimedBy, poolOf, stateOf } from '../pool/pods.ts';

export const OVER_CREATED_GRACE_MS = EXPECTATIONS_TTL_MS;

export interface OverCreatedPool {
  pool: PodPool;
  message: string;
  pods: Pod[];
}

export function overCreatedPools(
  pools: PodPool[],
  pods: Pod[],
  claims: PodClaim[],
  now: number,
): OverCreatedPool[] {
  const out: OverCreatedPool[] = [];
  for (const pool of pools) {
    if (pool.metadata.deletionTimestamp) continue;
    const ns = pool.metadata.namespace ?? '';
    const name = pool.metadata.name;
    const settled = pods.filter(
      (p) =>
        (p.metadata.namespace ?? '') === ns &&
        poolOf(p) === name &&
        now - (parseTimestamp(p.metadata.creationTimestamp) ?? now) >= OVER_CREATED_GRACE_MS,
    );
    if (settled.length > pool.spec.maxPods) {
      out.push({
        pool,
        message: `pool ${name} has ${settled.length} pods older than ${OVER_CREATED_GRACE_MS / 1000}s (terminating included), more than maxPods ${pool.spec.maxPods}`,
        pods: settled,
      });
      continue;
    }
    const pending = claims.filter(
      (c) =>
        (c.metadata.namespace ?? '') === ns && c.spec.poolName === name && !podNameOf(c) && !isDeleting(c),
    ).length;
    const live = settled.filter((p) => !isDeleting(p));
    const idle = live.filter((p) => stateOf(p) === 'Idle' && claimedBy(p) === undefined);
    const held = pods.filter(
      (p) =>
        (p.metadata.namespace ?? '') === ns && poolOf(p) === name && !isDeleting(p) && stateOf(p) !== 'Idle',
    ).length;
    const target = Math.min(pool.spec.minIdle + pending, Math.max(0, pool.spec.maxPods - held));
    const statusAgrees = (pool.status?.idle ?? 0) > target;
    if (idle.length > target && statusAgrees) {
      out.push({
        pool,
        message: `pool ${name} has ${idle.length} Idle pods older than ${OVER_CREATED_GRACE_MS / 1000}s, above its target ${target} (minIdle ${pool.spec.minIdle} + ${pending} Pending claim(s)), and its status shows ${pool.status?.idle} Idle`,
        pods: idle,
      });
    }
  }
  return out;
}
