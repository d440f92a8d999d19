// The simulator runs core's reconcilers across seeds (several controller replicas at once, pod
// deaths, same-name replacements, migrations, scale in/out, capture backends that succeed, fail or
// hang, API faults, cache lag, legacy writers) and must find zero violations. The 1M steps of
// `npm test` are split over simulator*.test.ts and soak-*.test.ts so vitest's workers run them on
// every core (vitest.config.ts); scripts/sim-steps-reporter.ts prints the total.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 12_500;

describe('simulator (1/2): two replicas', () => {
  test('seeds 1-8 (100k steps) keep every invariant', { timeout: 600_000 }, async ({ task }) => {
    const runs = [1, 2, 3, 4, 5, 6, 7, 8].map((seed) => ({
      seed,
      options: { modelOptions: schemaModelOptions() },
    }));
    const totals = await soak('(1/2) two replicas', task, runs, STEPS_PER_SEED, (r) => {
      expect(r.stats['action.quiesce']).toBeGreaterThan(10);
      expect(r.stats['reconcile.PodClaim']).toBeGreaterThan(1000);
    });
    expect(totals.steps).toBe(100_000);
  });
});
