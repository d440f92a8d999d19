// Each rule broken on purpose (a test-only switch) must be caught by the simulator's invariant
// checks: proof that the 200k clean steps are not passing vacuously.
import { describe, expect, test } from 'vitest';
import type { InvariantId } from '../invariants/check.ts';
import type { BrokenRule } from './broken-rules.ts';
import { brokenRules } from './broken-rules.ts';
import { runTrace, simulate } from './simulator.ts';

const CASES: [BrokenRule, InvariantId[]][] = [
  ['C1-unfenced-result', ['C1']],
  ['C2-takeover-unknown', ['C2']],
  ['P1-bind-without-cas', ['P1']],
  ['P2-lost-keeps-pod', ['P2']],
  ['P3-finalize-skips-shared-pod', ['P3']],
  ['P4-scale-in-picks-migrating', ['P4']],
  ['P5-finalize-leaves-label', ['P5']],
  ['P6-label-only-pod-events', ['P2', 'P6']],
  ['P7-foreign-label-takes-pod', ['P7']],
];

describe('a deliberately broken rule is caught', () => {
  for (const [rule, invariants] of CASES) {
    test(rule, { timeout: 120_000 }, async () => {
      let caught: { seed: number; invariants: InvariantId[]; traceLength: number } | undefined;
      for (let seed = 1; seed <= 12 && !caught; seed++) {
        const r = await simulate({ seed, steps: 3000, broken: [rule], shrinkBudget: 20 });
        if (r.violations.length > 0) {
          caught = { seed, invariants: r.violations.map((v) => v.invariant), traceLength: r.trace.length };
          // The trace replays: the same seed and actions violate again.
          const replay = await runTrace(seed, r.trace, { broken: [rule] });
          expect(replay.violations.length).toBeGreaterThan(0);
        }
      }
      expect(caught, `${rule} was not caught`).toBeDefined();
      expect(caught!.invariants.some((i) => invariants.includes(i))).toBe(true);
      expect(brokenRules.size).toBe(0);
    });
  }
});
