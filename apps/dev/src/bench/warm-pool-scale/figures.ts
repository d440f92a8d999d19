// The run's figures from what the phases measured (pure): latencies, requests by phase, the burst's
// target from the API server's measured capacity, issue 22's efficiency, and the comparison of a
// scaled run with the stored preset run.
import type { CpuSnapshot } from '../process-cpu.ts';
import {
  atMost,
  classifyRequests,
  diffCounts,
  efficiency,
  parseCounter,
  reconcilesByKind,
  requestCounts,
} from '../stats.ts';
import type { BurstPhase } from './burst.ts';
import { latencyOf, latencyOverTime } from './latency.ts';
import { type WarmPoolScaleOptions, WINDOW_MS } from './options.ts';
import type { RawWrites } from './raw-writes.ts';
import type { SteadyPhase } from './steady.ts';
import type { ClaimTimes } from './watches.ts';

/** A process group's CPU seconds between two snapshots. */
export const cpuSecondsOf = (s: { cpu0: CpuSnapshot; cpu1: CpuSnapshot }, name: string) =>
  (s.cpu1.get(name) ?? 0) - (s.cpu0.get(name) ?? 0);

/** The largest sample of a gauge over the shards' scrapes (heap figures are per process). */
export const gaugeMax = (text: string, metric: string) =>
  Math.max(0, ...parseCounter(text, metric).map((s) => s.value));

/** A counter summed over its series. */
const counterSum = (text: string, metric: string) =>
  parseCounter(text, metric).reduce((a, s) => a + s.value, 0);

export interface FiguresInput {
  o: Pick<WarmPoolScaleOptions, 'steady' | 'burst' | 'compare'>;
  claims: ReadonlyMap<string, ClaimTimes>;
  steady: Pick<
    SteadyPhase,
    'names' | 't0' | 'schedule' | 'probeWindows' | 'cpu0' | 'cpu1' | 'metricsBefore' | 'metricsAfter'
  >;
  burst: Pick<BurstPhase, 'names' | 'metricsBefore' | 'metricsAfter'>;
  raw: Pick<RawWrites, 'podPatchesPerSec' | 'metricsEnd' | 'rssMb'>;
  /** The largest RSS sampled during the run. */
  rssPeakSampled: number;
}

export function warmPoolScaleFigures({ o, claims, steady, burst, raw, rssPeakSampled }: FiguresInput) {
  const steadyLatency = latencyOf(claims, steady.names);
  const steadyOverTime = latencyOverTime({
    claims,
    names: steady.names,
    t0: steady.t0,
    lastArrivalMs: steady.schedule.at(-1) ?? 0,
    windowMs: WINDOW_MS,
    probeWindows: steady.probeWindows,
  });
  const burstLatency = latencyOf(claims, burst.names);
  const steadyRequests = classifyRequests(
    diffCounts(requestCounts(steady.metricsBefore), requestCounts(steady.metricsAfter)),
    o.steady,
  );
  const burstRequests = classifyRequests(
    diffCounts(requestCounts(burst.metricsBefore), requestCounts(burst.metricsAfter)),
    o.burst,
  );
  const allRequests = diffCounts({}, requestCounts(raw.metricsEnd));
  const podCreates = Object.entries(allRequests)
    .filter(([k]) => k.startsWith('create Pod 2'))
    .reduce((a, [, v]) => a + v, 0);

  // The bind rate the API server allows: raw pod patches/s over the writes one bind needs.
  const writesPerBind = Math.max(steadyRequests.writesPerBind, 1);
  const bindsPerSecCapacity = raw.podPatchesPerSec / writesPerBind;
  const burstTargetSeconds = 2 * (o.burst / bindsPerSecCapacity);
  // Issue 22's figures for the steady phase: CPU per bound claim (unrounded CPU-second deltas).
  const steadyReconciles = reconcilesByKind(steady.metricsBefore, steady.metricsAfter);
  const steadyEfficiency = efficiency({
    controllerCpuSeconds: cpuSecondsOf(steady, 'controller'),
    apiServerCpuSeconds: cpuSecondsOf(steady, 'kube-apiserver'),
    binds: o.steady,
    conflicts409: steadyRequests.conflicts409,
    writesPerBind: steadyRequests.writesPerBind,
  });
  const rssPeakMb = Math.max(rssPeakSampled, raw.rssMb);
  // A run at another scale than the preset's, against the stored preset run (issue 22: flat in
  // the number of pods): p50/p99 within 1.5x, controller CPU per claim within 1.2x, RSS <= 400 MB.
  const base = o.compare?.baseline;
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const comparison = o.compare
    ? {
        ...(base
          ? {
              baseline: base,
              p50Ratio: atMost(ratio(steadyLatency.addedToBound.p50Ms, base.p50Ms), 1.5),
              p99Ratio: atMost(ratio(steadyLatency.addedToBound.p99Ms, base.p99Ms), 1.5),
              controllerCpuPerClaimRatio: atMost(
                ratio(steadyEfficiency.controllerCpuMsPerClaim.value, base.controllerCpuMsPerClaim),
                1.2,
              ),
              // No target of its own: a pool reconcile should cost the same at either scale.
              podPoolReconcileMeanMs: {
                value: steadyReconciles.PodPool?.meanMs ?? Number.NaN,
                baseline: base.podPoolReconcileMeanMs ?? Number.NaN,
              },
            }
          : { baseline: 'none stored' }),
        rssPeakMb: atMost(rssPeakMb, 400),
      }
    : undefined;
  return {
    steadyLatency,
    steadyOverTime,
    burstLatency,
    steadyRequests,
    burstRequests,
    allRequests,
    podCreates,
    /** Reconciles and Events during the steady phase. */
    steadyReconcileCount:
      counterSum(steady.metricsAfter, 'claimkit_reconcile_total') -
      counterSum(steady.metricsBefore, 'claimkit_reconcile_total'),
    steadyEvents:
      counterSum(steady.metricsAfter, 'claimkit_events_total') -
      counterSum(steady.metricsBefore, 'claimkit_events_total'),
    bindsPerSecCapacity,
    burstTargetSeconds,
    steadyReconciles,
    steadyEfficiency,
    rssPeakMb,
    comparison,
  };
}

export type WarmPoolScaleFigures = ReturnType<typeof warmPoolScaleFigures>;
