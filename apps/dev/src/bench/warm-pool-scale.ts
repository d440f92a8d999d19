// warm-pool-scale: agent-sandbox's load test on kwok. PodPools warm `warm` pods in all (all Idle
// and Ready), then `steady` PodClaims arrive open-loop at `rate`/s (evenly spaced, or a seeded
// Poisson process), round-robin over the pools, then `burst` at once. The controller runs as shipped
// (dist/main.js with its image's Node flags) in its own process, so its RSS, CPU profile and
// /metrics are its own and the bench client's clock is not slowed by its work. agent-sandbox.ts runs
// the same load with its own shape (4 pools, Poisson arrivals, refilling).
//
// Sizing: the pools' minIdle add up to `warm` and their maxPods to warm + `refill`, so they start
// with `warm` warm pods and top themselves up by `refill` while the steady claims bind (as a warm
// pool under load does); at the preset (one pool, warm 3,700, refill 200) maxPods = steady + burst
// and the burst finds `burst` warm pods. Pods needed = warm + refill; nothing is released, so any
// create beyond that is over-creation.
//
// One phase a file, in warm-pool-scale/: set-up, the bench's watches, the controllers, warm, settle,
// steady, burst, raw writes, then the figures, the report and the teardown.
import type { BenchContext } from './context.ts';
import { atMost, type efficiency, type Target, targetTable } from './stats.ts';
import { burstPhase } from './warm-pool-scale/burst.ts';
import { claimSender } from './warm-pool-scale/claims.ts';
import { controllersReady, startControllers } from './warm-pool-scale/controllers.ts';
import { warmPoolScaleFigures } from './warm-pool-scale/figures.ts';
import type { WarmPoolScaleOptions } from './warm-pool-scale/options.ts';
import { rawWrites } from './warm-pool-scale/raw-writes.ts';
import { endOfRun, warmPoolScaleReport } from './warm-pool-scale/report.ts';
import { setUp } from './warm-pool-scale/set-up.ts';
import { cpuGroupsOf, settle } from './warm-pool-scale/settle.ts';
import { steadyPhase } from './warm-pool-scale/steady.ts';
import { finish, type Instruments, stopAll } from './warm-pool-scale/teardown.ts';
import { warmPools } from './warm-pool-scale/warm.ts';
import { watchPools } from './warm-pool-scale/watches.ts';
import { windowLine } from './window-probe.ts';

export async function benchWarmPoolScale(ctx: BenchContext, o: WarmPoolScaleOptions) {
  const run = await setUp(ctx, o);
  const view = watchPools(ctx, run);
  const controllers = await startControllers(ctx, o, run);
  const instruments: Instruments = {};
  const stop = () => stopAll(controllers, view, instruments);
  try {
    instruments.profiler = await controllersReady(controllers, ctx.say);
    const warm = await warmPools(ctx, o, run, view);
    const cpuGroups = cpuGroupsOf(controllers.pids);
    const settled = { ...(await settle(cpuGroups)), rssMb: controllers.rssNow() };
    const sender = claimSender(ctx, run, view);
    const phase = { ctx, o, run, view, controllers, sender, cpuGroups };
    const steady = await steadyPhase(phase, instruments);
    const burst = await burstPhase(phase);
    const raw = await rawWrites(phase);

    const figures = warmPoolScaleFigures({
      o,
      claims: view.claims,
      steady,
      burst,
      raw,
      rssPeakSampled: controllers.rssPeak(),
    });
    for (const w of figures.steadyOverTime) ctx.say(`  ${windowLine(w)}`);
    const result = warmPoolScaleReport({
      o,
      run,
      shards: controllers.shards,
      warm,
      settled,
      steady,
      burst,
      raw,
      figures,
      createErrors: sender.errors,
      podsSeen: view.podsSeen.size,
      end: endOfRun(controllers, steady.t0),
    });
    return await finish(ctx, o, run, result, steady.profile, stop);
  } finally {
    await stop();
  }
}

export type WarmPoolScaleResult = Awaited<ReturnType<typeof benchWarmPoolScale>>;

/** The rows a warm-pool-scale run reports with met/missed: latency, issue 22's, the comparison. */
export function warmPoolScaleRows(r: WarmPoolScaleResult): Array<[string, Target]> {
  const c = r.comparison;
  return [
    ['steady: claim -> Bound p50 ms', atMost(r.steady.latency.addedToBound.p50Ms, r.targets.steadyP50Ms)],
    ['steady: claim -> Bound p99 ms', atMost(r.steady.latency.addedToBound.p99Ms, r.targets.steadyP99Ms)],
    ['burst: all Bound, s', atMost(r.burst.allBoundSeconds, r.burst.targetSeconds)],
    ...efficiencyRows(r.steady.efficiency),
    ...(c && 'p50Ratio' in c
      ? ([
          ['vs the preset run: p50 ratio', c.p50Ratio],
          ['vs the preset run: p99 ratio', c.p99Ratio],
          ['vs the preset run: controller CPU per claim ratio', c.controllerCpuPerClaimRatio],
        ] as Array<[string, Target]>)
      : []),
    ...(c ? ([['controller RSS peak MB', c.rssPeakMb]] as Array<[string, Target]>) : []),
  ];
}

/** The rows every run reports with met/missed (issue 22). */
export function efficiencyRows(e: ReturnType<typeof efficiency>): Array<[string, Target]> {
  return [
    ['steady: controller / API server CPU per bind', e.cpuRatio],
    ['steady: controller CPU ms per claim', e.controllerCpuMsPerClaim],
    ['steady: 409s per bind', e.conflictsPerBind],
    ['steady: writes per bind', e.writesPerBind],
  ];
}

/** Says the run's targets as a table, one line each, with met/missed. */
export function sayTargets(say: (s: string) => void, title: string, rows: Array<[string, Target]>) {
  say(`${title}:`);
  for (const line of targetTable(rows).split('\n')) say(`  ${line}`);
}
