// Pool pods whose containers exit for good (phase Succeeded or Failed) in the simulator, among every
// other action: their claims go Lost and bind again, the pods are deleted rather than recycled, the
// pool replaces them, and every invariant (P2 with "finished" counted as gone) holds.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 3_000;

describe('simulator: pool pods that finish', () => {
  test('seeds 31-34 (one and two replicas) keep every invariant', { timeout: 300_000 }, async ({ task }) => {
    const runs = (
      [
        [31, 1],
        [32, 1],
        [33, 2],
        [34, 2],
      ] as const
    ).map(([seed, replicas]) => ({
      seed,
      options: { replicas, podFinishRate: 0.02, modelOptions: schemaModelOptions() },
    }));
    const totals = await soak('pods that finish', task, runs, STEPS_PER_SEED);
    expect(totals.stats['action.finishPod']).toBeGreaterThan(50);
  });
});
