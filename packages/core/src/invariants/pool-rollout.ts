// Convergence of a pool's warm buffer after a template rollout (DESIGN.md "PodPool"): once the
// controllers are quiet, no Idle pod is of an outdated template, and the Idle pods of the current
// template are back at min(minIdle, maxPods - claimed pods).
import { LABEL_POOL } from '../api/constants.ts';
import { keyString } from '../api/meta.ts';
import { isDeleting } from '../api/pod-predicates.ts';
import type { Capture, Pod, PodPool } from '../api/types.ts';
import { claimedBy, stateOf } from '../pool/pods.ts';
import { sourceStateOf } from '../pool/source.ts';
import { currentTemplateHash, isUpdatedPod } from '../pool/template-hash.ts';

export interface PoolRolloutViolation {
  invariant: 'rollout';
  message: string;
  objects: string[];
}

const nsOf = (o: { metadata: { namespace?: string } }) => o.metadata.namespace ?? '';
const id = (kind: string, o: { metadata: { namespace?: string; name: string } }) =>
  `${kind}/${keyString({ namespace: nsOf(o), name: o.metadata.name })}`;

/**
 * Checked only when quiet: during a rollout both conditions are briefly false by design. A pool
 * seeded from a Capture (spec.source) is judged against its fenced seed, looked up in `captures`;
 * while the source has none, the pool creates nothing and leaves its pods alone, so it is skipped.
 */
export function checkPoolRollout(
  pools: PodPool[],
  pods: Pod[],
  captures: readonly Capture[] = [],
): PoolRolloutViolation[] {
  const out: PoolRolloutViolation[] = [];
  for (const pool of pools) {
    if (pool.metadata.deletionTimestamp) continue;
    const hash = currentTemplateHash(pool, sourceStateOf(pool, captures));
    if (hash === undefined) continue;
    const mine = pods.filter(
      (p) =>
        nsOf(p) === nsOf(pool) && p.metadata.labels?.[LABEL_POOL] === pool.metadata.name && !isDeleting(p),
    );
    const idle = mine.filter((p) => stateOf(p) === 'Idle' && claimedBy(p) === undefined);
    const outdated = idle.filter((p) => !isUpdatedPod(p, hash));
    if (outdated.length > 0)
      out.push({
        invariant: 'rollout',
        message: `pool ${pool.metadata.name}: ${outdated.length} Idle pod(s) of an outdated template remain when quiet`,
        objects: [id('PodPool', pool), ...outdated.map((p) => id('Pod', p))],
      });
    const want = Math.min(pool.spec.minIdle, Math.max(0, pool.spec.maxPods - (mine.length - idle.length)));
    const current = idle.length - outdated.length;
    if (current < want)
      out.push({
        invariant: 'rollout',
        message: `pool ${pool.metadata.name}: ${current} Idle pod(s) of the current template when quiet, want ${want} (minIdle ${pool.spec.minIdle}, maxPods ${pool.spec.maxPods})`,
        objects: [id('PodPool', pool)],
      });
  }
  return out;
}
