// The simulator soak: runs seeds under given options, fails on the first violation with the seed and
// the shrunk trace, and reports steps, steps/s and violations, on the console and in the test's meta
// (scripts/sim-steps-reporter.ts adds the files up, since vitest runs them in separate workers).
import type { SimOptions, SimResult } from './options.ts';
import { formatTrace, formatViolations, simulate } from './run.ts';

/** One seed's run: the options beyond seed and steps (replicas, model options, kubectl, ...). */
export interface SoakRun {
  seed: number;
  options?: Omit<SimOptions, 'seed' | 'steps'>;
}

export interface SoakTotals {
  runs: number;
  steps: number;
  seconds: number;
  /** Every run's stats added up. */
  stats: Record<string, number>;
}

/** What the reporter reads from a passed soak test's meta (a violation fails the test instead). */
export interface SimStepsMeta {
  simSteps: number;
  simSeconds: number;
}

// Core's lib has no console (no DOM, no @types/node); the test runner provides one.
const console = (globalThis as unknown as { console: { log(s: string): void } }).console;

/** Describes a run in a failure: the seed and the options that differ from the defaults. */
export function describeRun(run: SoakRun): string {
  const { modelOptions, rules, mapEvent, ...rest } = run.options ?? {};
  // Functions do not serialise; say that they were passed.
  const passed = { modelOptions, rules, mapEvent };
  const named = Object.fromEntries(Object.entries(passed).flatMap(([k, v]) => (v ? [[k, 'given']] : [])));
  const shown = JSON.stringify({ ...rest, ...named });
  return `seed ${run.seed} ${shown}`;
}

/**
 * Runs each seed for `stepsPerRun` steps. `check` adds per-run assertions (it sees clean runs only).
 * Throws on the first violation (seed, violations, shrunk trace); records and prints the totals
 * otherwise.
 */
export async function soak(
  name: string,
  task: { meta: object },
  runs: readonly SoakRun[],
  stepsPerRun: number,
  check: (r: SimResult, run: SoakRun) => void = () => {},
): Promise<SoakTotals> {
  if (!Number.isInteger(stepsPerRun) || stepsPerRun <= 0)
    throw new Error(`soak ${name}: stepsPerRun must be a positive integer, got ${stepsPerRun}`);
  const seeds = new Set(runs.map((r) => r.seed));
  if (seeds.size !== runs.length) throw new Error(`soak ${name}: a seed is listed twice`);
  const totals: SoakTotals = { runs: 0, steps: 0, seconds: 0, stats: {} };
  const started = Date.now();
  for (const run of runs) {
    const r = await simulate({ shrinkBudget: 60, ...run.options, seed: run.seed, steps: stepsPerRun });
    if (r.violations.length > 0) {
      throw new Error(
        `${name}: ${describeRun(run)}:\n${formatViolations(r.violations)}\n${formatTrace(run.seed, r.trace)}`,
      );
    }
    check(r, run);
    totals.runs++;
    totals.steps += stepsPerRun;
    for (const [k, v] of Object.entries(r.stats)) totals.stats[k] = (totals.stats[k] ?? 0) + v;
  }
  totals.seconds = (Date.now() - started) / 1000;
  const meta: SimStepsMeta = { simSteps: totals.steps, simSeconds: totals.seconds };
  Object.assign(task.meta, meta);
  console.log(
    `simulator ${name}: ${totals.steps} steps over ${totals.runs} seeds in ${totals.seconds.toFixed(1)} s ` +
      `(${Math.round(totals.steps / totals.seconds)} steps/s), 0 violations`,
  );
  return totals;
}
