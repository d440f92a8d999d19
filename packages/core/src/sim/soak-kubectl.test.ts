// Simulator soak with a person with kubectl and the admission layer on (the CRDs' CEL and the
// policies): 200k steps over seeds 3001-3040, two replicas for the first half and three for the
// second. Every invariant holds after every step; the person's harmful writes are refused, nobody
// else is ever refused.
import { describe, expect, test } from 'vitest';
import { KUBECTL_OPS } from './kubectl-actor.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 5000;

describe('simulator soak: a person with kubectl, admission on', () => {
  test('seeds 3001-3040 (200k steps) keep every invariant', { timeout: 900_000 }, async ({ task }) => {
    const runs = Array.from({ length: 40 }, (_, i) => ({
      seed: 3001 + i,
      options: {
        replicas: i < 20 ? 2 : 3,
        adversary: false,
        kubectl: { admission: 'on' as const, rate: 0.04 },
      },
    }));
    const { steps, stats } = await soak('soak kubectl admission on', task, runs, STEPS_PER_SEED);
    expect(steps).toBe(200_000);
    for (const op of KUBECTL_OPS.filter((o) => o !== 'unlabel' && o !== 'dropFinalizer')) {
      expect(stats[`kubectl.${op}.refused`], op).toBeGreaterThan(0);
    }
    for (const op of ['unlabel', 'dropFinalizer'] as const) {
      expect(stats[`kubectl.${op}.accepted`], op).toBeGreaterThan(0);
    }
    expect(Object.keys(stats).filter((k) => k.startsWith('admission.refused.others'))).toEqual([]);
    expect(stats['action.quiesce']).toBeGreaterThan(500);
  });
});
