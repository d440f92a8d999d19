// P8 in the simulator: a pool never has more than maxPods pods, terminating ones included, with
// lagging caches, API faults (timeouts that land included), crashes and restarts. One replica keeps
// it after every write. Two active replicas may exceed it (counted as pool.transientExcess; claims
// may bind the excess): whenever they are quiet no Idle pod is left above maxPods.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { soak } from './soak.test-helper.ts';

// Seed 16 finds P8 within these steps when the controllers keep no expectations.
const STEPS_PER_SEED = 4_000;
/** Claims (the set's 2, solo ones) keep this pool at maxPods most of the time. */
const TIGHT = { minIdle: 2, maxPods: 4 };

describe('simulator: pool size (P8)', () => {
  test('one replica: never above maxPods, after every write', { timeout: 300_000 }, async ({ task }) => {
    const runs = [13, 14, 15, 16].map((seed) => ({
      seed,
      options: { replicas: 1, pool: TIGHT, modelOptions: schemaModelOptions() },
    }));
    const totals = await soak('pool size, one replica', task, runs, STEPS_PER_SEED);
    expect(totals.stats['action.lag']).toBeGreaterThan(10);
    expect(totals.stats['pool.transientExcess'] ?? 0).toBe(0);
  });

  test('two replicas: no Idle pod above maxPods whenever quiet', { timeout: 300_000 }, async ({ task }) => {
    const runs = [21, 22, 23, 24, 25, 26, 27, 28].map((seed) => ({
      seed,
      options: { replicas: 2, pool: TIGHT, modelOptions: schemaModelOptions() },
    }));
    const totals = await soak('pool size, two replicas', task, runs, STEPS_PER_SEED);
    expect(totals.stats['action.quiesce']).toBeGreaterThan(4);
    // The race this documents does happen in these seeds (a tight pool with claims waiting).
    expect(totals.stats['pool.transientExcess']).toBeGreaterThan(0);
  });
});
