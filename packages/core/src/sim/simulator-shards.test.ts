// Sharding by pool (loop/shard.ts, the controller's --shard): each replica reconciles only its shard's
// keys, as its Manager filters them, with the simulator's faults, lagging caches, crashes, restarts,
// kubectl writes and two pools (`web` is shard 1 of 2, `warm` shard 0, with the captures). With one
// replica per shard each pool has one active writer; with two per shard, two (as without sharding).
// Every invariant, convergence included, must hold: a key no shard takes would show as a claim or pool
// that never converges. Operators also pin pools to shards and move them (claimkit.dev/shard) mid-run.
import { describe, expect, test } from 'vitest';
import { shardOfPool } from '../loop/shard.ts';
import { schemaModelOptions } from '../schema/index.ts';
import { poolMoveWithoutClaims } from './broken-routing.ts';
import { NS } from './cluster.ts';
import type { SimOptions } from './options.ts';
import { simulate } from './run.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 4_000;

/** Two shards; even seeds one replica per shard, odd seeds two; the pool `warm` seeded by either capture. */
const sharded = (seed: number, extra: Partial<SimOptions> = {}): Omit<SimOptions, 'seed' | 'steps'> => ({
  replicas: seed % 2 === 0 ? 2 : 4,
  shards: 2,
  poolSource: { capture: seed % 4 < 2 ? 'cap-http' : 'cap-ext' },
  modelOptions: schemaModelOptions(),
  ...extra,
});

describe('simulator: replicas sharded by pool', () => {
  test('the two pools are on different shards (what these runs rely on)', () => {
    expect(shardOfPool(NS, 'web', 2)).not.toBe(shardOfPool(NS, 'warm', 2));
  });

  test('two shards, one and two replicas each', { timeout: 300_000 }, async ({ task }) => {
    const runs = [41, 42, 43, 44].map((seed) => ({ seed, options: sharded(seed) }));
    const totals = await soak('sharded replicas', task, runs, STEPS_PER_SEED, (r) => {
      // Both shards did work, and the worker-side check found keys queued before their pool was known.
      expect(r.stats['shard.0.reconciles'] ?? 0).toBeGreaterThan(0);
      expect(r.stats['shard.1.reconciles'] ?? 0).toBeGreaterThan(0);
    });
    expect(totals.stats['source.podsSeeded'] ?? 0).toBeGreaterThan(0);
  });

  test('pools pinned to and moved between shards (claimkit.dev/shard) while claims bind', {
    timeout: 300_000,
  }, async ({ task }) => {
    const runs = [45, 46, 47, 48].map((seed) => ({ seed, options: sharded(seed, { poolPinRate: 0.01 }) }));
    const totals = await soak('sharded replicas, pools moving', task, runs, STEPS_PER_SEED, (r) => {
      expect(r.stats['action.pinPool'] ?? 0).toBeGreaterThan(10);
      expect(r.stats['shard.0.reconciles'] ?? 0).toBeGreaterThan(0);
      expect(r.stats['shard.1.reconciles'] ?? 0).toBeGreaterThan(0);
    });
    expect(totals.stats['action.pinPool'] ?? 0).toBeGreaterThan(0);
  });

  test('the moving runs can fail: a move that does not wake the claims on their new shard is caught', async () => {
    // One replica per shard (56) and two (49); seeds the move's bug shows in within 4,000 steps.
    for (const seed of [56, 49]) {
      const r = await simulate({
        ...sharded(seed, { poolPinRate: 0.01, mapEvent: poolMoveWithoutClaims, shrinkBudget: 0 }),
        seed,
        steps: STEPS_PER_SEED,
      });
      // Claims whose keys stayed with the old shard never converge (P2/P3 when quiet).
      expect(
        r.violations.map((v) => v.invariant),
        `seed ${seed}`,
      ).toEqual(expect.arrayContaining([expect.stringMatching(/^P[23]$/)]));
    }
  });
});
