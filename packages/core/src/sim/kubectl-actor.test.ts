// A person with kubectl in the simulator (issue 10): random direct writes that bypass core, made
// while two controller replicas run with faults, lag, crashes and the rest of the simulated world.
// Admission on: every safety invariant holds after every step, every quiet-state invariant (P7 and
// result fencing included) at every quiet period, and only the person's harmful writes are refused.
// Admission off: every quiet period is a repair point; each violation is converged by the
// controllers or found by doctor, and nothing is left after doctor --fix.
import { describe, expect, test } from 'vitest';
import { KUBECTL_OPS } from './kubectl-actor.ts';
import type { RepairRecord } from './repair-point.ts';
import { formatTrace, formatViolations, type SimResult, simulate } from './simulator.ts';

const STEPS = 5000;
const RATE = 0.04;

function failure(r: SimResult): Error {
  const last = r.repairs[r.repairs.length - 1];
  const record = last
    ? `\nlast repair point: findings ${last.findings.map((f) => `${f.code} ${f.objects[0]}`).join(', ') || 'none'}`
    : '';
  return new Error(
    `seed ${r.seed}:\n${formatViolations(r.violations)}${record}\n${formatTrace(r.seed, r.trace)}`,
  );
}

function sum(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

describe('a person with kubectl, admission on', () => {
  test('seeds 31-36: every invariant holds; harmful writes are refused, the allowed ones land', {
    timeout: 300_000,
  }, async () => {
    const stats: Record<string, number> = {};
    for (const seed of [31, 32, 33, 34, 35, 36]) {
      const r = await simulate({
        seed,
        steps: STEPS,
        adversary: false,
        kubectl: { admission: 'on', rate: RATE },
        shrinkBudget: 60,
      });
      if (r.violations.length > 0) throw failure(r);
      sum(stats, r.stats);
    }
    // Each kind of harmful write was tried and refused by the API server...
    for (const op of KUBECTL_OPS.filter((o) => o !== 'unlabel' && o !== 'dropFinalizer')) {
      expect(stats[`kubectl.${op}.refused`], op).toBeGreaterThan(0);
    }
    // ...what a person may do landed (the controllers repair it)...
    for (const op of ['unlabel', 'dropFinalizer'] as const) {
      expect(stats[`kubectl.${op}.accepted`], op).toBeGreaterThan(0);
    }
    // ...and nobody else was ever refused (that would be a violation of the run).
    expect(Object.keys(stats).filter((k) => k.startsWith('admission.refused.others'))).toEqual([]);
    expect(stats['action.quiesce']).toBeGreaterThan(50);
  });
});

describe('a person with kubectl, admission off', () => {
  test('seeds 41-46: each violation is converged by the controllers or found by doctor, none is left after --fix', {
    timeout: 300_000,
  }, async () => {
    const stats: Record<string, number> = {};
    const repairs: RepairRecord[] = [];
    for (const seed of [41, 42, 43, 44, 45, 46]) {
      const r = await simulate({
        seed,
        steps: STEPS,
        adversary: false,
        kubectl: { admission: 'off', rate: RATE },
        shrinkBudget: 30,
      });
      if (r.violations.length > 0) throw failure(r);
      sum(stats, r.stats);
      repairs.push(...r.repairs);
    }
    // Damage the "on" layers would have refused landed, of every kind the actor makes...
    expect(stats['admission.wouldRefuse.kubectl.crd']).toBeGreaterThan(0);
    expect(stats['admission.wouldRefuse.kubectl.policy']).toBeGreaterThan(0);
    for (const op of KUBECTL_OPS) expect(stats[`kubectl.${op}.accepted`], op).toBeGreaterThan(0);
    // ...and was repaired both ways: by the controllers alone, and by doctor.
    expect(repairs.length).toBeGreaterThan(50);
    expect(repairs.some((r) => r.convergedByController.length > 0)).toBe(true);
    expect(repairs.some((r) => r.foundByDoctor.length > 0)).toBe(true);
  });
});
