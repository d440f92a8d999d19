// Simulator soak, two controller replicas with the CRDs' schema: 200k steps over seeds 1001-1016,
// alternating the default fault rates with a noisier API (10 % faults) and an agent down half the time.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 12_500;

describe('simulator soak: two replicas', () => {
  test('seeds 1001-1016 (200k steps) keep every invariant', { timeout: 900_000 }, async ({ task }) => {
    const runs = Array.from({ length: 16 }, (_, i) => ({
      seed: 1001 + i,
      options: {
        replicas: 2,
        modelOptions: schemaModelOptions(),
        ...(i % 2 === 1 ? { faultRate: 0.1, agentDownRate: 0.5 } : {}),
      },
    }));
    const totals = await soak('soak two replicas', task, runs, STEPS_PER_SEED, (r) => {
      expect(r.stats['action.quiesce']).toBeGreaterThan(10);
      expect(r.stats['reconcile.PodClaim']).toBeGreaterThan(1000);
    });
    expect(totals.steps).toBe(200_000);
  });
});
