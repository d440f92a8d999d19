// Named simulator regressions: seeds whose soak failed, shrunk to the actions that matter and replayed
// with the soak's options, so the failure stays fixed however the soak's action draw changes.
import { describe, expect, test } from 'vitest';
import type { Pod, PodClaim } from '../api/types.ts';
import type { Action } from './actions.ts';
import { formatViolations, openWorld, runTrace, step } from './simulator.ts';

/**
 * Soak seed 4007 (no schema in the model, two replicas), shrunk from 1,722 actions: a legacy writer
 * points the Lost claim set-pdbvj at solo-7's pod web-8ggmd and deletes solo-7 (action 36) while
 * replica 1's cache lags three events (action 32). The model's merge patch shared metadata with the
 * stored object, so the writer's patch stamped its resourceVersion on the older event that cache had
 * yet to apply: replica 1 read set-pdbvj as unbound under the current resourceVersion, and its bind
 * to an Idle pod passed the claim's optimistic-concurrency check, dropping web-8ggmd (P7).
 * Since the pool's creates are gated by expectations and slow start, this trace no longer reaches
 * the stale read (the pool scales differently, so names and timing differ); it stays as a scenario.
 * The root cause is pinned where it lives: model/api-model.test.ts (the lagging cache's event keeps
 * its resourceVersion) and properties.test.ts (a merge patch shares nothing), both failing on the
 * aliasing merge.
 */
const SEED_4007: Action[] = [
  { t: 'reconcile', ctl: 1 },
  { t: 'reconcile', ctl: 1 },
  { t: 'kubelet' },
  { t: 'reconcile', ctl: 1 },
  { t: 'createClaim' },
  { t: 'reconcile', ctl: 1 },
  { t: 'kubelet' },
  { t: 'reconcile', ctl: 1 },
  { t: 'reconcile', ctl: 1 },
  { t: 'reconcile', ctl: 1 },
  { t: 'replaceWorker', i: 2 },
  { t: 'restart', ctl: 1 },
  { t: 'reconcile', ctl: 1 },
  { t: 'reconcileCrash', ctl: 1, after: 1 },
  { t: 'reconcile', ctl: 1 },
  { t: 'migrate', i: 3, to: true },
  { t: 'deletePod', pool: true, i: 4 },
  { t: 'createClaim' },
  { t: 'createClaim' },
  { t: 'deleteClaim', i: 0 },
  { t: 'reconcile', ctl: 1 },
  { t: 'reconcile', ctl: 1 },
  { t: 'createClaim' },
  { t: 'reconcile', ctl: 1 },
  { t: 'reconcile', ctl: 1 },
  { t: 'reconcile', ctl: 1 },
  { t: 'createClaim' },
  { t: 'createClaim' },
  { t: 'deleteClaim', i: 0 },
  { t: 'scaleSet', replicas: 1 },
  { t: 'createClaim' },
  { t: 'quiesce' },
  { t: 'lag', ctl: 1, lag: 3, reads: 5 },
  { t: 'deletePod', pool: true, i: 4 },
  { t: 'reconcile', ctl: 0 },
  { t: 'reconcile', ctl: 0 },
  { t: 'adversary', i: 0, j: 6 },
  { t: 'reconcile', ctl: 1 },
];

describe('simulator regressions', () => {
  test('seed 4007: a lagging cache never binds a claim from content older than its resourceVersion (P7)', async () => {
    const r = await runTrace(4007, SEED_4007, { replicas: 2 });
    expect(formatViolations(r.violations)).toBe('');
  });

  test('seed 4007: the lagging replica reconcile takes no claim off the pod it references', async () => {
    // The pods' names depend on how the pool scales, so the check is by reference, not by name.
    const w = await openWorld(4007, { replicas: 2 });
    const last = SEED_4007.length - 1;
    for (const a of SEED_4007.slice(0, last)) expect(formatViolations(await step(w, a))).toBe('');
    const claims = () => w.model.peek('PodClaim') as PodClaim[];
    const before = new Map(
      claims()
        .filter((c) => c.status?.podName)
        .map((c) => [c.metadata.name, c.status?.podName]),
    );
    expect(before.size).toBeGreaterThan(0);
    expect(formatViolations(await step(w, SEED_4007[last]!))).toBe('');
    const pods = new Set((w.model.peek('Pod') as Pod[]).map((p) => p.metadata.name));
    for (const c of claims()) {
      const had = before.get(c.metadata.name);
      if (had && pods.has(had)) expect(c.status?.podName, c.metadata.name).toBe(had);
    }
  });
});
