// Second half of the 200k simulated steps: two and three controller replicas at once.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { formatTrace, formatViolations, simulate } from './simulator.ts';

const STEPS_PER_SEED = 12_500;

describe('simulator (2/2): two and three replicas', () => {
  test('seeds 101-104 with two replicas and 201-204 with three (100k steps) keep every invariant', {
    timeout: 600_000,
  }, async () => {
    let steps = 0;
    for (const [seed, replicas] of [
      [101, 2],
      [102, 2],
      [103, 2],
      [104, 2],
      [201, 3],
      [202, 3],
      [203, 3],
      [204, 3],
    ] as const) {
      const r = await simulate({
        seed,
        steps: STEPS_PER_SEED,
        replicas,
        modelOptions: schemaModelOptions(),
        shrinkBudget: 60,
      });
      if (r.violations.length > 0) {
        throw new Error(
          `seed ${seed} (${replicas} replicas):\n${formatViolations(r.violations)}\n${formatTrace(seed, r.trace)}`,
        );
      }
      expect(r.stats['reconcile.PodClaim']).toBeGreaterThan(1000);
      steps += STEPS_PER_SEED;
    }
    expect(steps).toBe(100_000);
  });
});
