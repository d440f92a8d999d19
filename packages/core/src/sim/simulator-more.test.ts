// Second half of the original 200k simulated steps: two and three controller replicas at once.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 12_500;

describe('simulator (2/2): two and three replicas', () => {
  test('seeds 101-104 with two replicas and 201-204 with three (100k steps) keep every invariant', {
    timeout: 600_000,
  }, async ({ task }) => {
    const runs = (
      [
        [101, 2],
        [102, 2],
        [103, 2],
        [104, 2],
        [201, 3],
        [202, 3],
        [203, 3],
        [204, 3],
      ] as const
    ).map(([seed, replicas]) => ({ seed, options: { replicas, modelOptions: schemaModelOptions() } }));
    const totals = await soak('(2/2) two and three replicas', task, runs, STEPS_PER_SEED, (r) => {
      expect(r.stats['reconcile.PodClaim']).toBeGreaterThan(1000);
    });
    expect(totals.steps).toBe(100_000);
  });
});
