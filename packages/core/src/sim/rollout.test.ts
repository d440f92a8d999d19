// Template rollouts in the simulator: a person changes the pool's template among every other action
// (faults, lagging caches, restarts, crashes, two replicas); every invariant holds at every step and,
// at every quiet point, the warm buffer is back: no outdated Idle pod, min(minIdle, room) current
// Idle pods. The check itself is shown to fail on a pool that did not roll out.
import { describe, expect, test } from 'vitest';
import { checkPoolRollout } from '../invariants/pool-rollout.ts';
import { schemaModelOptions } from '../schema/index.ts';
import {
  idle,
  inPool,
  ofTemplate,
  pod,
  podPool,
  podTemplate,
  ready,
  withMinIdle,
  withTemplate,
} from '../testing/fixtures.ts';
import { formatViolations, runTrace, simulate } from './simulator.ts';

describe('simulator: template rollouts', () => {
  test('seeds 301-304 (12k steps) with rollouts and /scale writes keep every invariant and restore the warm buffer', {
    timeout: 300_000,
  }, async () => {
    let rollouts = 0;
    let scales = 0;
    for (const seed of [301, 302, 303, 304]) {
      const r = await simulate({ seed, steps: 3000, replicas: 2, modelOptions: schemaModelOptions() });
      expect(r.violations, formatViolations(r.violations)).toEqual([]);
      rollouts += r.stats['action.rollout'] ?? 0;
      scales += r.stats['action.scalePool'] ?? 0;
    }
    expect(rollouts).toBeGreaterThan(3);
    expect(scales).toBeGreaterThan(3);
  });

  test('a rollout and a scale to zero and back right before a quiet point converge', async () => {
    const r = await runTrace(
      7,
      [
        { t: 'kubelet' },
        { t: 'rollout', image: 2 },
        { t: 'scalePool', minIdle: 0 },
        { t: 'quiesce' },
        { t: 'scalePool', minIdle: 3 },
        { t: 'rollout', image: 3 },
        { t: 'quiesce' },
      ],
      { modelOptions: schemaModelOptions() },
    );
    expect(r.violations).toEqual([]);
    expect(r.stats['action.rollout']).toBe(2);
  });

  test('the check names a pool whose Idle pods were not rolled out', () => {
    const v2 = podTemplate({ app: 'web' }, { containers: [{ name: 'main', image: 'web:2' }] });
    const pool = podPool('web', withMinIdle(2), withTemplate(v2));
    const stale = [pod('a', inPool('web'), idle(), ready()), pod('b', inPool('web'), idle(), ready())];
    expect(checkPoolRollout([pool], stale).map((v) => v.message)).toEqual([
      'pool web: 2 Idle pod(s) of an outdated template remain when quiet',
      'pool web: 0 Idle pod(s) of the current template when quiet, want 2 (minIdle 2, maxPods 50)',
    ]);
    const fresh = stale.map((p) => pod(p.metadata.name, inPool('web'), idle(), ready(), ofTemplate(v2)));
    expect(checkPoolRollout([pool], fresh)).toEqual([]);
  });
});
