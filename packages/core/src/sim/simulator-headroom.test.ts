// The headroom window (loop/coalesce.ts): a pool with Idle to spare waits 2 s, not 500 ms, on its
// pods' and claims' changes. The simulator's pools never hold core's 16 Idle pods, so these runs lower
// the floor to 1: every pool with minIdle / 2 Idle pods beyond its waiting claims takes the long
// window, and every invariant (convergence included) must still hold.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 4_000;
const POOL = { minIdle: 4, maxPods: 8 };

describe('simulator: pools with Idle headroom wait longer', () => {
  test('one and two replicas', { timeout: 300_000 }, async ({ task }) => {
    const runs = [31, 32, 33, 34].map((seed) => ({
      seed,
      options: {
        replicas: 1 + (seed % 2),
        pool: POOL,
        headroomMinIdle: 1,
        modelOptions: schemaModelOptions(),
      },
    }));
    const totals = await soak('pool headroom window', task, runs, STEPS_PER_SEED);
    // The long window is taken (not a run that never reaches it).
    expect(totals.stats['route.headroomWindow']).toBeGreaterThan(100);
  });
});
