// Capture jobs that cannot be started: the agent is down most of the time (its start throws) or
// refuses a stale token. A refusal is a fenced failed attempt (CaptureFailed, Failed after
// maxAttempts); an unreachable agent is retried until timeoutSeconds, then costs an attempt too.
// Never an error escaping the reconcile, and every invariant must hold.
import { describe, expect, test } from 'vitest';
import { schemaModelOptions } from '../schema/index.ts';
import { formatTrace, formatViolations, simulate } from './simulator.ts';

describe('simulator: capture agent refusing starts', () => {
  test('seeds 302-303 with the agent down 90 % of the time keep every invariant', {
    timeout: 300_000,
  }, async () => {
    for (const seed of [302, 303]) {
      const r = await simulate({
        seed,
        steps: 6000,
        agentDownRate: 0.9,
        modelOptions: schemaModelOptions(),
        shrinkBudget: 60,
      });
      if (r.violations.length > 0) {
        throw new Error(`seed ${seed}:\n${formatViolations(r.violations)}\n${formatTrace(seed, r.trace)}`);
      }
      expect(r.stats['agent.startsRefused']).toBeGreaterThan(0);
      expect(r.stats['capture.startFailed']).toBeGreaterThan(0);
      expect(r.stats['action.quiesce']).toBeGreaterThan(10);
    }
  });
});
