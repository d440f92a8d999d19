// Running the simulator: a fixed trace from a fresh world (runTrace), a seed's generated run with its
// failing trace shrunk (simulate, shrink), and the text a failure is reported with.
import { Rng } from '../model/clock.ts';
import { type Action, genAction } from './actions.ts';
import { apply } from './apply.ts';
import { checkStep } from './check-step.ts';
import { SIM_DEFAULTS, type SimOptions, type SimResult } from './options.ts';
import type { RepairRecord, SimViolation } from './repair-point.ts';
import { openWorld } from './world.ts';

/** Runs a fixed list of actions (a trace) from a fresh world; returns the first violations. */
export async function runTrace(
  seed: number,
  actions: Action[],
  opts: Omit<SimOptions, 'seed' | 'steps'> = {},
): Promise<{
  violations: SimViolation[];
  at: number;
  stats: Record<string, number>;
  repairs: RepairRecord[];
}> {
  const w = await openWorld(seed, opts);
  for (let i = 0; i < actions.length; i++) {
    await apply(w, actions[i]!);
    const v = await checkStep(w, actions[i]!);
    if (v.length > 0) return { violations: v, at: i, stats: w.stats, repairs: w.repairs };
  }
  await apply(w, { t: 'quiesce' });
  const v = await checkStep(w, { t: 'quiesce' });
  w.stats['agent.startsRefused'] = w.agent.startsRefused;
  if ((opts as { debug?: boolean }).debug) {
    const console = (globalThis as unknown as { console: { log(s: string): void } }).console;
    for (const c of w.model.listNow('PodClaim'))
      console.log(
        JSON.stringify({
          m: c.metadata.name,
          d: c.metadata.deletionTimestamp,
          spec: c.spec,
          st: c.status?.phase,
          a: c.metadata.annotations,
        }),
      );
    for (const p of w.model.listNow('Pod'))
      console.log(
        JSON.stringify({ p: p.metadata.name, l: p.metadata.labels, d: p.metadata.deletionTimestamp }),
      );
    for (const c of w.ctls) console.log(JSON.stringify([...c.queue]));
  }
  return { violations: v, at: v.length > 0 ? actions.length : -1, stats: w.stats, repairs: w.repairs };
}

/** Generates and runs a simulation; on a violation, returns the seed and a shrunk trace. */
export async function simulate(opts: SimOptions): Promise<SimResult> {
  const rng = new Rng(opts.seed);
  const gen = {
    replicas: opts.replicas ?? SIM_DEFAULTS.replicas,
    faultRate: opts.faultRate ?? SIM_DEFAULTS.faultRate,
    agentDownRate: opts.agentDownRate ?? 0.15,
    adversary: opts.adversary ?? true,
    kubectlRate: opts.kubectl ? (opts.kubectl.rate ?? 0.03) : 0,
    podFinishRate: opts.podFinishRate ?? 0,
    poolPinRate: opts.poolPinRate ?? 0,
    ...(opts.kubectl?.ops ? { kubectlOps: opts.kubectl.ops } : {}),
  };
  const every = opts.quiesceEvery ?? 300;
  const actions: Action[] = [];
  for (let i = 0; i < opts.steps; i++) {
    actions.push((i + 1) % every === 0 ? { t: 'quiesce' } : genAction(rng, gen));
  }
  const run = await runTrace(opts.seed, actions, opts);
  if (run.violations.length === 0) {
    return {
      seed: opts.seed,
      steps: opts.steps,
      violations: [],
      trace: [],
      stats: run.stats,
      repairs: run.repairs,
    };
  }
  const failing = actions.slice(0, run.at + 1);
  const trace = await shrink(opts.seed, failing, opts, opts.shrinkBudget ?? 300);
  const final = await runTrace(opts.seed, trace, opts);
  return {
    seed: opts.seed,
    steps: opts.steps,
    violations: final.violations.length > 0 ? final.violations : run.violations,
    trace,
    stats: run.stats,
    repairs: run.repairs,
  };
}

/** Delta debugging: drop chunks of actions while the trace still violates an invariant. */
async function shrink(
  seed: number,
  trace: Action[],
  opts: Omit<SimOptions, 'seed' | 'steps'>,
  budget = 300,
): Promise<Action[]> {
  let cur = trace;
  let chunk = Math.max(1, Math.floor(cur.length / 2));
  let runs = 0;
  while (chunk >= 1 && runs < budget) {
    let changed = false;
    for (let start = 0; start < cur.length && runs < budget; ) {
      const candidate = [...cur.slice(0, start), ...cur.slice(start + chunk)];
      runs++;
      const r = await runTrace(seed, candidate, opts);
      if (r.violations.length > 0) {
        cur = candidate.slice(0, r.at + 1);
        changed = true;
      } else start += chunk;
    }
    if (!changed) chunk = Math.floor(chunk / 2);
  }
  return cur;
}

export function formatTrace(seed: number, trace: Action[]): string {
  return [
    `seed ${seed}, ${trace.length} action(s):`,
    ...trace.map((a, i) => `  ${i}: ${JSON.stringify(a)}`),
  ].join('\n');
}

export function formatViolations(vs: SimViolation[]): string {
  return vs
    .map((v) => `${v.invariant}: ${v.message}${v.objects.length ? ` [${v.objects.join(', ')}]` : ''}`)
    .join('\n');
}
