// Each piece of the event → queue layer broken on purpose must be caught by the simulator: proof that
// the World drives core's router, coalescing and own-writes skip (not copies of them). The bugs are
// data handed to the simulator (broken-loop.ts), as broken rules and routing are (broken-rules.test.ts).
import { describe, expect, test } from 'vitest';
import { OWN_WRITES_TTL_MS } from '../loop/own-writes.ts';
import { schemaModelOptions } from '../schema/index.ts';
import type { Action } from './actions.ts';
import { BROKEN_LOOP } from './broken-loop.ts';
import { NS } from './cluster.ts';
import type { SimViolation } from './repair-point.ts';
import { step } from './scenarios.ts';
import { runTrace, type SimOptions, simulate } from './simulator.ts';
import { openWorld } from './world.ts';

type Broken = Omit<SimOptions, 'seed' | 'steps'>;

/**
 * Runs 12 seeds from `first` until one violates; the shrunk trace must replay, and the same trace
 * must keep every invariant with core's own loop.
 */
async function expectCaught(broken: Broken, what: string, first = 1): Promise<SimViolation[]> {
  for (let seed = first; seed < first + 12; seed++) {
    const r = await simulate({ seed, steps: 3000, shrinkBudget: 20, ...broken });
    if (r.violations.length === 0) continue;
    const replay = await runTrace(seed, r.trace, broken);
    expect(replay.violations.length).toBeGreaterThan(0);
    const clean = await runTrace(seed, r.trace);
    expect(clean.violations).toEqual([]);
    return r.violations;
  }
  expect.fail(`${what} was not caught in seeds ${first}-${first + 11}`);
}

describe('a deliberately broken event → queue layer is caught', () => {
  test('coalescing that drops a key', { timeout: 180_000 }, async () => {
    const vs = await expectCaught(BROKEN_LOOP['coalescing-drops-pool-keys'], 'coalescing that drops a key');
    expect(vs.length).toBeGreaterThan(0);
  });

  test('a status-only filter that swallows a spec change', async () => {
    // A rollout and a scale-up right before quiet points: only the pool's own spec change can start them.
    const trace: Action[] = [
      { t: 'quiesce' },
      { t: 'rollout', image: 2 },
      { t: 'quiesce' },
      { t: 'scalePool', minIdle: 4 },
      { t: 'quiesce' },
    ];
    const opts = { modelOptions: schemaModelOptions() };
    const clean = await runTrace(7, trace, opts);
    expect(clean.violations).toEqual([]);
    const broken = await runTrace(7, trace, { ...opts, ...BROKEN_LOOP['status-filter-swallows-spec'] });
    expect(broken.violations.map((v) => v.invariant)).toContain('rollout');
  });

  /**
   * A replica's cache stops (a watch that delivers nothing more) right after it saw a new claim; the
   * replica binds the claim (its own writes), so its cache shows a version it replaced. The skip must
   * let the key through once OWN_WRITES_TTL_MS has passed; one that never expires holds it for good.
   */
  async function cacheStuckBehindOwnWrite(broken: Broken): Promise<SimViolation[]> {
    const w = await openWorld(11, { replicas: 1, ...broken });
    const out: SimViolation[] = [];
    const run = async (a: Action) => out.push(...(await step(w, a)));
    await run({ t: 'quiesce' });
    await run({ t: 'createClaim' });
    // The cache syncs (it sees the claim), then stays 10 000 events behind: nothing more arrives.
    await run({ t: 'lag', ctl: 0, lag: 10_000, reads: 10_000 });
    for (let i = 0; i < 40; i++) {
      await run({ t: 'reconcile', ctl: 0 });
      await run({ t: 'tick', ms: 1000 });
    }
    expect(w.stats['skip.cacheBehind'] ?? 0, 'the skip held the claim back').toBeGreaterThan(0);
    return out;
  }

  test('an own-writes skip that never expires (seeds)', { timeout: 180_000 }, async () => {
    // Seeds 13-24: since claims take turns (pool/waiting-queue.ts), 1-12 bind before a skip matters.
    const vs = await expectCaught(
      BROKEN_LOOP['own-writes-never-expire'],
      'an own-writes skip that never expires',
      13,
    );
    expect(vs.map((v) => v.invariant)).toContain('held-back');
  });

  test('an own-writes skip that never expires (a cache stuck behind)', { timeout: 60_000 }, async () => {
    const clean = await cacheStuckBehindOwnWrite({});
    expect(clean.filter((v) => v.invariant === 'held-back')).toEqual([]);
    const broken = await cacheStuckBehindOwnWrite(BROKEN_LOOP['own-writes-never-expire']);
    expect(broken.map((v) => v.invariant)).toContain('held-back');
    expect(broken.find((v) => v.invariant === 'held-back')?.objects[0]).toMatch(
      new RegExp(`^PodClaim\\|${NS}/`),
    );
    expect(OWN_WRITES_TTL_MS).toBe(5000);
  });
});
