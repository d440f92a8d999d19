// The simulator runs core's reconcilers across seeds (several controller replicas at once, pod
// deaths, same-name replacements, migrations, scale in/out, capture backends that succeed, fail or
// hang, API faults, cache lag, legacy writers) and must find zero violations. The 200k steps are
// split over two files so vitest runs them on both cores.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { formatTrace, formatViolations, simulate } from './simulator.ts';

const STEPS_PER_SEED = 12_500;

describe('simulator (1/2): two replicas', () => {
  test('seeds 1-8 (100k steps) keep every invariant', { timeout: 600_000 }, async () => {
    let steps = 0;
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const r = await simulate({
        seed,
        steps: STEPS_PER_SEED,
        modelOptions: schemaModelOptions(),
        shrinkBudget: 60,
      });
      if (r.violations.length > 0) {
        throw new Error(`seed ${seed}:\n${formatViolations(r.violations)}\n${formatTrace(seed, r.trace)}`);
      }
      expect(r.stats['action.quiesce']).toBeGreaterThan(10);
      expect(r.stats['reconcile.PodClaim']).toBeGreaterThan(1000);
      steps += STEPS_PER_SEED;
    }
    expect(steps).toBe(100_000);
  });
});
