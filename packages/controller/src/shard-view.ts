// Which keys, pools and objects this process answers for (--shard; core's loop/shard.ts), judged by
// what its cache shows: a claim goes with its pool, a pool with its claimkit.dev/shard pin or hash.
// With one shard everything is this process's.
import {
  LABEL_POOL,
  ownsKey,
  type Pod,
  type PodClaim,
  type PodPool,
  type Shard,
  shardOfPool,
  shardPin,
} from '@claimkit/core';

type Get<T> = (key: { namespace: string; name: string }) => T | undefined;

const ns = (o: { metadata: { namespace?: string } }) => o.metadata.namespace ?? '';

export class ShardView {
  readonly shard: Shard;
  private readonly claim: Get<PodClaim>;
  private readonly pool: Get<PodPool>;

  constructor(shard: Shard, cache: { claim: Get<PodClaim>; pool: Get<PodPool> }) {
    this.shard = shard;
    this.claim = cache.claim;
    this.pool = cache.pool;
  }

  get sharded(): boolean {
    return this.shard.count > 1;
  }

  /** Whether this shard reconciles `key` (a claim goes with its pool). */
  owns(key: string): boolean {
    if (!this.sharded) return true;
    return ownsKey(this.shard, key, {
      claimPool: (namespace, name) => this.claim({ namespace, name })?.spec.poolName,
      poolPin: (namespace, pool) => this.pin(namespace, pool),
    });
  }

  ownsPool(namespace: string, pool: string): boolean {
    return shardOfPool(namespace, pool, this.shard.count, this.pin(namespace, pool)) === this.shard.index;
  }

  /** The pools this shard reports (their gauges, their claims' transitions). */
  ownPools(pools: PodPool[]): PodPool[] {
    return this.sharded ? pools.filter((p) => this.ownsPool(ns(p), p.metadata.name)) : pools;
  }

  ownPods(pods: Pod[]): Pod[] {
    if (!this.sharded) return pods;
    return pods.filter((p) => {
      const pool = p.metadata.labels?.[LABEL_POOL];
      return pool !== undefined && this.ownsPool(ns(p), pool);
    });
  }

  ownClaims(claims: PodClaim[]): PodClaim[] {
    return this.sharded ? claims.filter((c) => this.ownsClaim(c)) : claims;
  }

  ownsClaim(c: PodClaim): boolean {
    return this.ownsPool(ns(c), c.spec.poolName);
  }

  /** The pool's claimkit.dev/shard pin, as the cache shows the pool. */
  private pin(namespace: string, pool: string): number | undefined {
    return shardPin(this.pool({ namespace, name: pool }));
  }
}
