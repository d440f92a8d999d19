// The pure parts of the phases: how the pools fill the namespaces, what counts as settled, and how
// many Idle pods each pool settles at after the burst.
import { describe, expect, it } from 'vitest';
import { planPools } from '../stats.ts';
import { settledIdle } from './burst.ts';
import { mostPodsPerNamespace } from './set-up.ts';
import { settlingCores } from './settle.ts';

describe('warm-pool-scale phases', () => {
  it('set-up: the most pods any one namespace holds, every pool at its maxPods', () => {
    // maxPods 4, 4 in the first namespace, 2, 2 in the second.
    expect(mostPodsPerNamespace(planPools({ warm: 10, refill: 2, namespaces: 2, pools: 4 }))).toBe(8);
    expect(mostPodsPerNamespace(planPools({ warm: 3700, refill: 200, namespaces: 1, pools: 1 }))).toBe(3900);
  });

  it('settle: the control plane and the controller count, the bench and each shard again do not', () => {
    expect(
      settlingCores({
        'kube-apiserver': { cores: 0.15 },
        etcd: { cores: 0.05 },
        controller: { cores: 0.1 },
        'controller shard 0': { cores: 0.06 },
        'controller shard 1': { cores: 0.04 },
        'bench client': { cores: 1 },
      }),
    ).toBeCloseTo(0.3);
  });

  it('burst: each pool settles at min(minIdle, maxPods - its share of every claim)', () => {
    // The preset: one pool that every claim empties.
    expect(settledIdle(planPools({ warm: 3700, refill: 200, namespaces: 1, pools: 1 }), 3600, 300)).toEqual([
      0,
    ]);
    // agent-sandbox's shape: room for every claim, so each pool is back at its minIdle.
    expect(settledIdle(planPools({ warm: 452, refill: 3000, namespaces: 1, pools: 4 }), 2700, 300)).toEqual([
      113, 113, 113, 113,
    ]);
    // Uneven shares: claim i to pool i mod 2 (4 and 3 claims against maxPods 6).
    const plan = [
      { namespace: 0, name: 'a', minIdle: 3, maxPods: 6 },
      { namespace: 0, name: 'b', minIdle: 3, maxPods: 6 },
    ];
    expect(settledIdle(plan, 5, 2)).toEqual([2, 3]);
  });
});
