// Simulator soak, three controller replicas at once with the CRDs' schema: 200k steps over seeds
// 2001-2016, alternating the default fault rates with a noisier API (10 % faults) and quiet periods
// twice as often (more convergence checks).
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 12_500;

describe('simulator soak: three replicas', () => {
  test('seeds 2001-2016 (200k steps) keep every invariant', { timeout: 900_000 }, async ({ task }) => {
    const runs = Array.from({ length: 16 }, (_, i) => ({
      seed: 2001 + i,
      options: {
        replicas: 3,
        modelOptions: schemaModelOptions(),
        ...(i % 2 === 1 ? { faultRate: 0.1, quiesceEvery: 150 } : {}),
      },
    }));
    const totals = await soak('soak three replicas', task, runs, STEPS_PER_SEED, (r) => {
      expect(r.stats['action.quiesce']).toBeGreaterThan(10);
      expect(r.stats['reconcile.PodClaim']).toBeGreaterThan(1000);
    });
    expect(totals.steps).toBe(200_000);
  });
});
