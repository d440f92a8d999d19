// The Manager's timers as simulator actions (actions.ts `sweep`, `resync`): the capture recovery
// sweep, fenced on the list it read, races the replicas' reconciles, holders and faults; the resync
// queues every object again. Every invariant must hold with them, and the sweep must really act
// (take over dead or expired claims), not only run.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { soak } from './soak.test-helper.ts';

const STEPS_PER_SEED = 6_000;

describe("simulator: the Manager's sweep and resync timers", () => {
  test('seeds 61-66, one to three replicas', { timeout: 300_000 }, async ({ task }) => {
    const runs = [61, 62, 63, 64, 65, 66].map((seed) => ({
      seed,
      options: { replicas: 1 + (seed % 3), modelOptions: schemaModelOptions() },
    }));
    const totals = await soak('sweep and resync', task, runs, STEPS_PER_SEED);
    expect(totals.stats['sweep.run']).toBeGreaterThan(50);
    expect(totals.stats['action.resync']).toBeGreaterThan(50);
    // The sweep took over at least one claim before a reconcile did.
    expect(totals.stats['sweep.changed']).toBeGreaterThan(0);
  });
});
