// Claim latencies from the bench's own watches (pure): per set of claims, and over the steady phase
// in windows by arrival time.
import { latencySummary } from '../stats.ts';
import type { ClaimTimes } from './watches.ts';

/**
 * ADDED arrival -> first Bound arrival (same clock, same stream, so the watch's own delivery delay
 * cancels), create sent -> Bound arrival, and the stages in between.
 */
export function latencyOf(claims: ReadonlyMap<string, ClaimTimes>, names: readonly string[]) {
  const addedToBound: number[] = [];
  const sentToBound: number[] = [];
  // Where the time goes, from the same two watches: claim seen -> its pod labelled (the
  // controller's informer, queue and the pod CAS), -> spec.podName (the spec write), -> Bound
  // (the status write). The pod stream and the claim stream are delivered separately, so a stage
  // can come out slightly negative.
  const toPodLabelled: number[] = [];
  const toSpec: number[] = [];
  const toStatus: number[] = [];
  for (const n of names) {
    const c = claims.get(n);
    if (c?.boundAt === undefined) continue;
    if (c.addedAt !== undefined) addedToBound.push(c.boundAt - c.addedAt);
    if (c.sentAt !== undefined) sentToBound.push(c.boundAt - c.sentAt);
    if (c.addedAt !== undefined && c.podLabelledAt !== undefined && c.specAt !== undefined) {
      toPodLabelled.push(c.podLabelledAt - c.addedAt);
      toSpec.push(c.specAt - c.podLabelledAt);
      toStatus.push(c.boundAt - c.specAt);
    }
  }
  return {
    addedToBound: latencySummary(addedToBound),
    createSentToBound: latencySummary(sentToBound),
    stages: {
      addedToPodLabelled: latencySummary(toPodLabelled),
      podLabelledToSpec: latencySummary(toSpec),
      specToBound: latencySummary(toStatus),
    },
  };
}

/**
 * The steady claims by arrival time (ms after `t0`) in windows of `windowMs`, up to the last one
 * scheduled: a transient (the pool's first refill, a GC) shows where it is. Each window beside the
 * window probe's of the same start (a window whose scrape failed is merged with the next).
 */
export function latencyOverTime<W extends { fromSecond: number }>(o: {
  claims: ReadonlyMap<string, ClaimTimes>;
  names: readonly string[];
  t0: number;
  lastArrivalMs: number;
  windowMs: number;
  probeWindows: readonly W[];
}) {
  const { claims, names, t0, windowMs } = o;
  return Array.from({ length: Math.ceil((o.lastArrivalMs + 1) / windowMs) }, (_, w) => {
    const inWindow = names.filter((n) => {
      const at = (claims.get(n)?.addedAt ?? Number.NaN) - t0;
      return at >= w * windowMs && at < (w + 1) * windowMs;
    });
    const lat = latencyOf(claims, inWindow);
    const { n, p50Ms, p99Ms, maxMs } = lat.addedToBound;
    // Which stage a window's tail is in (controller and pod CAS, spec write, status write).
    const stagesP99Ms = {
      addedToPodLabelled: lat.stages.addedToPodLabelled.p99Ms,
      podLabelledToSpec: lat.stages.podLabelledToSpec.p99Ms,
      specToBound: lat.stages.specToBound.p99Ms,
    };
    // What the controller, the API server and the canary saw in the same window (probe's windows
    // start at t0 + w * windowMs too).
    const fromSecond = (w * windowMs) / 1000;
    const probed = o.probeWindows.find((p) => Math.abs(p.fromSecond - fromSecond) < 1);
    // The bench's create sent -> its ADDED on the bench's claim watch (the create's answer and the
    // claim watch's delivery, which the controller's claim watch shares).
    const sentToAdded = inWindow.flatMap((k) => {
      const c = claims.get(k);
      return c?.sentAt !== undefined && c.addedAt !== undefined ? [c.addedAt - c.sentAt] : [];
    });
    const { p99Ms: sentToAddedP99Ms, maxMs: sentToAddedMaxMs } = latencySummary(sentToAdded);
    return {
      fromSecond,
      n,
      p50Ms,
      p99Ms,
      maxMs,
      stagesP99Ms,
      sentToAddedP99Ms,
      sentToAddedMaxMs,
      ...(probed ? { probe: probed } : {}),
    };
  });
}
