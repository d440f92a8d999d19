import { describe, expect, it } from 'vitest';
import { MAX_SHARDS } from '../pool/shard-pin.ts';
import { reconcileKey } from './reconcile-key.ts';
import {
  ONE_SHARD,
  ownsKey,
  parseShard,
  runsClusterWideWork,
  shardLeaseName,
  shardOfKey,
  shardOfPool,
} from './shard.ts';

/** Claims c-<pool>-<i> on pools p0..p(n-1) in two namespaces, as a cache would answer. */
function world(pools: number, claimsPerPool: number) {
  const claims = new Map<string, string>();
  const keys: string[] = [];
  for (const ns of ['a', 'b'])
    for (let p = 0; p < pools; p++) {
      keys.push(reconcileKey('PodPool', ns, `p${p}`));
      for (let i = 0; i < claimsPerPool; i++) {
        claims.set(`${ns}/c-${p}-${i}`, `p${p}`);
        keys.push(reconcileKey('PodClaim', ns, `c-${p}-${i}`));
      }
    }
  keys.push(reconcileKey('Capture', 'a', 'cap'), reconcileKey('PodClaimSet', 'a', 'set'));
  return { keys, lookup: { claimPool: (ns: string, name: string) => claims.get(`${ns}/${name}`) } };
}

describe('sharding by pool', () => {
  it('every key belongs to exactly one shard, for every count', () => {
    const { keys, lookup } = world(20, 3);
    for (let count = 1; count <= 7; count++) {
      for (const key of keys) {
        const owners = [...Array(count).keys()].filter((index) => ownsKey({ index, count }, key, lookup));
        expect(owners, `${key} of ${count}`).toHaveLength(1);
      }
    }
  });

  it('a claim is on its pool’s shard (the bind’s CAS and the pool’s demand in one process)', () => {
    const { lookup } = world(20, 3);
    for (let count = 2; count <= 5; count++)
      for (let p = 0; p < 20; p++)
        for (let i = 0; i < 3; i++)
          expect(shardOfKey(reconcileKey('PodClaim', 'a', `c-${p}-${i}`), count, lookup)).toBe(
            shardOfKey(reconcileKey('PodPool', 'a', `p${p}`), count, lookup),
          );
  });

  it('the same pool name in two namespaces is two pools (hashed with its namespace)', () => {
    const spread = new Set<string>();
    for (let p = 0; p < 40; p++)
      spread.add(`${shardOfPool('a', `p${p}`, 4)}-${shardOfPool('b', `p${p}`, 4)}`);
    expect([...spread].some((s) => s[0] !== s[2])).toBe(true);
  });

  it('pools spread over the shards (200 pools, 4 shards: each gets 30 to 70)', () => {
    const n = [0, 0, 0, 0];
    for (let p = 0; p < 200; p++) n[shardOfPool('ns', `pool-${p}`, 4)]!++;
    for (const x of n) {
      expect(x).toBeGreaterThanOrEqual(30);
      expect(x).toBeLessThanOrEqual(70);
    }
  });

  it('the hash is fixed: processes of different versions agree (pinned values)', () => {
    expect(shardOfPool('ns1', 'web', 2)).toBe(0);
    expect(shardOfPool('ns1', 'warm', 2)).toBe(1);
    expect(shardOfPool('sim', 'web', 3)).toBe(2);
  });

  it('a claim the cache does not have is anyone’s; captures and the cluster-wide work are shard 0’s', () => {
    const none = { claimPool: () => undefined };
    expect(shardOfKey('PodClaim|a/gone', 3, none)).toBeUndefined();
    for (let index = 0; index < 3; index++)
      expect(ownsKey({ index, count: 3 }, 'PodClaim|a/gone', none)).toBe(true);
    expect(shardOfKey('Capture|a/x', 3, none)).toBe(0);
    expect(runsClusterWideWork({ index: 0, count: 3 })).toBe(true);
    expect(runsClusterWideWork({ index: 2, count: 3 })).toBe(false);
    expect(ownsKey(ONE_SHARD, 'Capture|a/x', none)).toBe(true);
  });

  it('a pinned pool (claimkit.dev/shard) is on its pin modulo the count, and its claims with it', () => {
    const { keys, lookup } = world(20, 3);
    // p0..p3 pinned to 0..3; the others hashed.
    const pinned = {
      ...lookup,
      poolPin: (_ns: string, pool: string) => ({ p0: 0, p1: 1, p2: 2, p3: 3 })[pool],
    };
    for (let count = 2; count <= 5; count++) {
      for (let p = 0; p < 4; p++) {
        expect(shardOfKey(reconcileKey('PodPool', 'a', `p${p}`), count, pinned), `p${p} of ${count}`).toBe(
          p % count,
        );
        expect(shardOfKey(reconcileKey('PodClaim', 'b', `c-${p}-1`), count, pinned)).toBe(p % count);
      }
      expect(shardOfKey(reconcileKey('PodPool', 'a', 'p7'), count, pinned)).toBe(
        shardOfPool('a', 'p7', count),
      );
      for (const key of keys) {
        const owners = [...Array(count).keys()].filter((index) => ownsKey({ index, count }, key, pinned));
        expect(owners, `${key} of ${count}`).toHaveLength(1);
      }
    }
    expect(shardOfPool('a', 'p0', 1, 3)).toBe(0);
  });

  it('parses INDEX/COUNT and says what is wrong', () => {
    expect(parseShard('0/1')).toEqual({ index: 0, count: 1 });
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    for (const bad of ['3/3', '1', '-1/2', '0/0', 'a/b', '', `0/${MAX_SHARDS + 1}`, '1/2/3']) {
      const r = parseShard(bad);
      expect('problem' in r, bad).toBe(true);
      if ('problem' in r) expect(r.problem).toContain('INDEX/COUNT');
    }
  });

  it('one shard keeps the Lease name it always had; shards get their own', () => {
    expect(shardLeaseName('claimkit-controller', ONE_SHARD)).toBe('claimkit-controller');
    expect(shardLeaseName('claimkit-controller', { index: 1, count: 3 })).toBe(
      'claimkit-controller-shard-1-of-3',
    );
  });
});
