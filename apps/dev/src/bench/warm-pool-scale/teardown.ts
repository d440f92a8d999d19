// Teardown: everything the run started stopped (also when it failed), the steady phase's CPU
// profile written out, the result said, and the namespaces deleted when asked.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BenchContext, cleanup } from '../context.ts';
import type { PhaseProfiler } from '../inspector-profile.ts';
import { summariseProfile } from '../profile-summary.ts';
import type { WindowProbe } from '../window-probe.ts';
import type { Controllers } from './controllers.ts';
import type { WarmPoolScaleOptions } from './options.ts';
import type { RunPlan } from './set-up.ts';
import type { PoolView } from './watches.ts';

/** What the run measures with besides the controllers, once started: stopped at its end. */
export interface Instruments {
  probe?: WindowProbe;
  profiler?: PhaseProfiler;
}

/** Stops the sampling, the probe, the watches, the profiler and the controllers, in that order. */
export async function stopAll(controllers: Controllers, view: PoolView, instruments: Instruments) {
  controllers.stopWatching();
  instruments.probe?.cancel();
  view.stop();
  instruments.profiler?.close();
  instruments.profiler = undefined;
  await controllers.stop();
}

type Profile = Parameters<typeof summariseProfile>[0];

/** Writes the profile into `dir` and returns its summary (top 15 self time, categories). */
function saveProfile(dir: string, key: string, profile: Profile) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${key}-steady-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  return { file, phase: 'steady', ...summariseProfile(profile, 15) };
}

/** The run's end once its result is known: returns the result with its profile's summary. */
export async function finish<R extends object>(
  ctx: BenchContext,
  o: WarmPoolScaleOptions,
  run: RunPlan,
  result: R,
  steadyProfile: Profile | undefined,
  stop: () => Promise<void>,
) {
  await stop();
  const cpuProfile =
    steadyProfile && o.cpuProfDir ? saveProfile(o.cpuProfDir, o.key, steadyProfile) : undefined;
  if (cpuProfile) ctx.say(`steady-phase CPU profile: ${cpuProfile.file}`);
  ctx.say(JSON.stringify({ ...result, method: undefined, requestsWholeRun: undefined }));
  if (o.cleanup) await Promise.all(run.namespaces.map((n) => cleanup(ctx, n)));
  return { ...result, ...(cpuProfile ? { cpuProfile } : {}) };
}
