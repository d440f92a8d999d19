// A pool seeded from a Capture (PodPool spec.source) in the simulator: the pool `warm` takes its
// pods from `cap-ext` (completed by holders) or `cap-http` (completed by the agent), among every
// other action (resets recreate the captures, so results come and go). S1 is checked on every
// step (invariants/tracker.ts): a pod carrying claimkit.dev/source-* was seeded from a (capture,
// token, ref) that stood fenced at some point; every other invariant holds as without the pool.
import { describe, expect, test } from 'vitest';
import type { SimOptions } from './options.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 3_000;
const CAPTURES = ['cap-ext', 'cap-http'] as const;

const runs = (first: number, options: Omit<SimOptions, 'seed' | 'steps' | 'poolSource'> = {}) =>
  CAPTURES.flatMap((capture, c) =>
    [0, 1, 2].map((i) => ({
      seed: first + c * 10 + i,
      options: { ...options, replicas: i + 1, poolSource: { capture } },
    })),
  );

describe('simulator: a pool seeded from a Capture', () => {
  test('cap-ext seeds 5101-5103, cap-http seeds 5111-5113: every invariant holds, S1 included, and pods are seeded', {
    timeout: 300_000,
  }, async ({ task }) => {
    let seeded = 0;
    const totals = await soak('pool source', task, runs(5101), STEPS_PER_SEED, (r) => {
      if ((r.stats['source.podsSeeded'] ?? 0) > 0) seeded++;
    });
    // Most runs get a fenced result and seed pods (a run whose capture keeps failing seeds none).
    expect(seeded).toBeGreaterThan(totals.runs / 2);
    // Some runs see more than one fenced result (a capture recreated and completed again).
    expect(totals.stats['source.results']).toBeGreaterThan(totals.runs);
  });

  test('seeds 5201-5213, admission off, a person writes stale-token results: no pod is ever seeded from one (S1), the repair point converges', {
    timeout: 300_000,
  }, async ({ task }) => {
    const options = {
      adversary: false,
      kubectl: { admission: 'off' as const, ops: ['staleResult' as const], rate: 0.05 },
    };
    const totals = await soak('pool source, stale results', task, runs(5201, options), STEPS_PER_SEED);
    expect(totals.stats['kubectl.staleResult.accepted']).toBeGreaterThan(100);
    expect(totals.stats['source.podsSeeded']).toBeGreaterThan(0);
  });

  test('seeds 5301-5313, admission on: the controller seeding pods is never refused', {
    timeout: 300_000,
  }, async ({ task }) => {
    const options = { adversary: false, kubectl: { admission: 'on' as const, rate: 0.04 } };
    const totals = await soak('pool source, admission on', task, runs(5301, options), STEPS_PER_SEED);
    expect(totals.stats['source.podsSeeded']).toBeGreaterThan(0);
    expect(Object.keys(totals.stats).filter((k) => k.startsWith('admission.refused.others'))).toEqual([]);
  });
});
