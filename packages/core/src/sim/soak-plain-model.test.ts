// Simulator soak without the CRDs' schema in the model (a cluster whose CRDs neither default nor
// validate, as with a legacy install): two and three replicas, 200k steps over seeds 4001-4016. The
// controllers alone must keep every invariant.
import { describe, expect, test } from 'vitest';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 12_500;

describe('simulator soak: no schema in the model', () => {
  test('seeds 4001-4016 (200k steps) keep every invariant', { timeout: 900_000 }, async ({ task }) => {
    const runs = Array.from({ length: 16 }, (_, i) => ({
      seed: 4001 + i,
      options: { replicas: i < 8 ? 2 : 3, ...(i % 2 === 1 ? { agentDownRate: 0.5 } : {}) },
    }));
    const totals = await soak('soak no schema', task, runs, STEPS_PER_SEED, (r) => {
      expect(r.stats['action.quiesce']).toBeGreaterThan(10);
      expect(r.stats['reconcile.PodClaim']).toBeGreaterThan(1000);
    });
    expect(totals.steps).toBe(200_000);
  });
});
