// Candidate choice for binding: Idle, same pool, unreferenced, Ready, not deleting, on a node that
// can serve (serving.ts); stable order by full creationTimestamp then name, so replicas deciding
// from one snapshot pick the same pod.
import { LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import { parseTimestamp } from '../api/meta.ts';
import { listOldestFirst, type OldestFirstKey } from '../api/oldest-first.ts';
import type { Reader } from '../api/ports.ts';
import type { Pod } from '../api/types.ts';
import { sortByCreationThenName } from '../capture/candidates.ts';
import { fnv1a } from '../claimset/claim-names.ts';
import type { ClaimIndex } from './claim-index.ts';
import { isIdleAndReady, poolOf } from './pods.ts';
import { isStranded, NO_UNSERVABLE_NODES, ServingNodes, type UnservableNodes } from './serving.ts';

const isCandidate = (pool: string, p: Pod, index: ClaimIndex, unservable: UnservableNodes) =>
  poolOf(p) === pool &&
  isIdleAndReady(p) &&
  !isStranded(p, unservable) &&
  !index.isReferenced(p.metadata.namespace ?? '', p.metadata.name);

export function bindCandidates(
  pool: string,
  pods: Pod[],
  index: ClaimIndex,
  unservable: UnservableNodes = NO_UNSERVABLE_NODES,
): Pod[] {
  return sortByCreationThenName(pods.filter((p) => isCandidate(pool, p, index, unservable)));
}

/**
 * The first `limit` of bindCandidates, without sorting them all: a claim's gather wants the oldest
 * CANDIDATE_WINDOW of thousands of Idle pods on every pass, and sorting the whole pool (each
 * timestamp parsed) was the controller's top cost at 3,700 Idle pods. One pass keeps the oldest
 * `limit` in order (parseTimestamp memoizes: pods created in the same second share one parse).
 */
export function oldestBindCandidates(
  pool: string,
  pods: readonly Pod[],
  index: ClaimIndex,
  limit: number,
  unservable: UnservableNodes = NO_UNSERVABLE_NODES,
): Pod[] {
  if (limit <= 0) return [];
  const timeOf = (p: Pod) => parseTimestamp(p.metadata.creationTimestamp) ?? 0;
  // Ascending by (time, name), at most `limit` long.
  const top: { pod: Pod; t: number }[] = [];
  const before = (a: { pod: Pod; t: number }, b: { pod: Pod; t: number }) =>
    a.t < b.t || (a.t === b.t && a.pod.metadata.name < b.pod.metadata.name);
  for (const pod of pods) {
    // Order first (cheap), candidacy only for a pod that would enter the window: most of thousands
    // of Idle pods are newer than the window's last and are never checked.
    const x = { pod, t: timeOf(pod) };
    if (top.length === limit && !before(x, top[limit - 1]!)) continue;
    if (!isCandidate(pool, pod, index, unservable)) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(x, top[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    top.splice(lo, 0, x);
    if (top.length > limit) top.pop();
  }
  return top.map((x) => x.pod);
}

/** The selector of a pool's Idle pods (the label index the cache keeps oldest first). */
export function idlePodsSelector(pool: string): { matchLabels: Record<string, string> } {
  return { matchLabels: { [LABEL_POOL]: pool, [LABEL_STATE]: 'Idle' } };
}

/**
 * oldestBindCandidates of the pool's Idle pods in `namespace` (no claim index: the caller filters
 * references), read oldest first a page at a time until `limit` are found: a Reader that keeps
 * them in that order (the informer cache) makes a claim's gather cost O(limit), not O(Idle pods).
 * Nodes are read only for the pods looked at, through `nodes` (which then knows their verdicts).
 * Same pods in the same order as oldestBindCandidates over the namespace's Idle pods with their
 * nodes' verdicts (names are unique in a namespace, so no tie is left to input order).
 */
export async function readOldestBindCandidates(
  cache: Reader,
  namespace: string,
  pool: string,
  limit: number,
  nodes: ServingNodes = new ServingNodes(cache),
): Promise<Pod[]> {
  const out: Pod[] = [];
  if (limit <= 0) return out;
  const selector = idlePodsSelector(pool);
  let after: OldestFirstKey | undefined;
  for (;;) {
    const page = await listOldestFirst(cache, 'Pod', {
      namespace,
      labelSelector: selector,
      limit,
      ...(after ? { after } : {}),
    });
    for (const p of page.items) {
      if (poolOf(p) !== pool || !isIdleAndReady(p) || (await nodes.isStranded(p))) continue;
      out.push(p);
      if (out.length === limit) return out;
    }
    if (!page.next) return out;
    after = page.next;
  }
}

/** Concurrent binds spread over this many of the oldest candidates (fewer CAS conflicts: 45 -> 12 of 500 binds at 8 workers, 32 -> 128). */
export const CANDIDATE_WINDOW = 128;

/**
 * The candidate a claim takes: one of the oldest CANDIDATE_WINDOW, chosen by a hash of the claim's
 * UID. Deterministic per claim (replicas deciding one claim from one snapshot agree), while
 * different claims binding at once mostly pick different pods instead of racing for the first.
 */
export function pickCandidate(
  sorted: Pod[],
  claim: { metadata: { uid?: string; name: string } },
): Pod | undefined {
  if (sorted.length === 0) return undefined;
  const window = Math.min(sorted.length, CANDIDATE_WINDOW);
  return sorted[fnv1a(claim.metadata.uid ?? claim.metadata.name) % window];
}
