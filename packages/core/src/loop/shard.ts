// Sharding by pool (--shard INDEX/COUNT): when one process is not enough, COUNT controller processes
// (each with its own Lease and standbys) split the reconcile keys, and each reconciles only its own.
// A claim and its pool's pods are always on one shard: the bind's CAS is on the pod and the pool's
// refill and scale-down count its claims as demand, so a PodClaim key belongs to the shard of its pool
// (spec.poolName is immutable, so a claim never moves). A PodPool key is its own pool's. Captures (the
// capture sweep and one-time jobs, low in volume) and the doctor stay on shard 0. A PodClaimSet hashes
// its own key: it writes only claims, which go to their pools' shards. Every shard still watches
// everything (an informer cannot filter by a hash), so sharding splits the reconciles and the writes,
// not the watch decoding.
//
// A pool may name its shard instead (annotation claimkit.dev/shard, taken modulo COUNT): a hash of a
// few pool names often puts two busy pools on one shard. Changing it moves the pool and its claims:
// the new shard is woken for every claim of the pool (loop/map-event.ts), the old one drops their
// keys as the worker takes them, and while the two caches disagree both may act, as below.
//
// Never for safety, like leader election: two shards acting on one key (a COUNT changed under a
// rolling update) are two active replicas, which every invariant already tolerates.
import { fnv1a } from '../claimset/claim-names.ts';
import { MAX_SHARDS } from '../pool/shard-pin.ts';
import { parseReconcileKey } from './reconcile-key.ts';

export interface Shard {
  /** 0 ≤ index < count. */
  readonly index: number;
  readonly count: number;
}

/** One process reconciling everything (the default). */
export const ONE_SHARD: Shard = Object.freeze({ index: 0, count: 1 });

/**
 * The shard of a pool: its pin (annotation claimkit.dev/shard) modulo the count, else FNV-1a of
 * `namespace/name` modulo the count (stable across processes and versions).
 */
export function shardOfPool(namespace: string, pool: string, count: number, pin?: number): number {
  if (count <= 1) return 0;
  return pin !== undefined ? pin % count : fnv1a(`${namespace}/${pool}`) % count;
}

/** What the shard of a key needs besides the key, from the process's cache. */
export interface ShardLookup {
  /** spec.poolName of the PodClaim, undefined when the cache does not have it. */
  claimPool(namespace: string, name: string): string | undefined;
  /** The pool's shard pin (shardPin of the cached PodPool); absent: no pool is pinned. */
  poolPin?(namespace: string, pool: string): number | undefined;
}

/**
 * The shard that reconciles `key` (a reconcile key, `Kind|ns/name`), or undefined when any may: a
 * PodClaim the cache does not have (gone, or not seen yet) has nothing to reconcile, and whichever
 * shard is asked finds that out.
 */
export function shardOfKey(key: string, count: number, lookup: ShardLookup): number | undefined {
  if (count <= 1) return 0;
  const { kind, namespace, name } = parseReconcileKey(key);
  switch (kind) {
    case 'PodPool':
      return shardOfPool(namespace, name, count, lookup.poolPin?.(namespace, name));
    case 'PodClaim': {
      const pool = lookup.claimPool(namespace, name);
      return pool === undefined
        ? undefined
        : shardOfPool(namespace, pool, count, lookup.poolPin?.(namespace, pool));
    }
    case 'PodClaimSet':
      return fnv1a(`PodClaimSet|${namespace}/${name}`) % count;
    case 'Capture':
      return 0;
  }
}

/** Whether this shard reconciles `key`. */
export function ownsKey(shard: Shard, key: string, lookup: ShardLookup): boolean {
  if (shard.count <= 1) return true;
  const s = shardOfKey(key, shard.count, lookup);
  return s === undefined || s === shard.index;
}

/** Whether this shard runs the capture sweep and the doctor (shard 0). */
export function runsClusterWideWork(shard: Shard): boolean {
  return shard.index === 0;
}

/** `INDEX/COUNT` (`--shard 1/3`) as a Shard, or the problem with it. */
export function parseShard(s: string): Shard | { problem: string } {
  const m = /^(\d{1,3})\/(\d{1,3})$/.exec(s.trim());
  const want = `want INDEX/COUNT with 0 <= INDEX < COUNT <= ${MAX_SHARDS}, e.g. 0/1 or 2/3`;
  if (!m) return { problem: `${want}, got ${JSON.stringify(s)}` };
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS || index >= count) {
    return { problem: `${want}, got ${JSON.stringify(s)}` };
  }
  return { index, count };
}

/** The Lease name of a shard: `base` alone with one shard (as before sharding), else `base-shard-I-of-N`. */
export function shardLeaseName(base: string, shard: Shard): string {
  return shard.count <= 1 ? base : `${base}-shard-${shard.index}-of-${shard.count}`;
}
