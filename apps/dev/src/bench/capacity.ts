// capacity: the controller at and past its API server's limit (issue 41). The capacity is measured
// first in the same run (raw pod patches/s ÷ the writes one claim costs), then claims arrive as a
// seeded Poisson process at 0.5×, 1.0× and 1.5× of it, one load after the other, each drained
// before the next. Two shapes:
// - binds (default): the pools are warmed with a pod for every claim of the run and capped there
//   (maxPods = minIdle), so no refill shares the API server with the binds: the bind path alone,
//   2 writes a claim (the pod's CAS, the claim's status; claims are created with the release
//   finalizer, as claimkit's clients create them).
// - refill (--refill): each pool keeps a small warm buffer (agent-sandbox's 113 Idle pods) and makes
//   the rest on demand, so past capacity claims wait for new pods, many claims for each one (the
//   collapse issue 41 reports): 5 writes a claim (the bind's 2, and the new pod's create, scheduler
//   binding and kwok's status update).
// Per load: throughput (claims ÷ first create → last Bound) as a fraction of the capacity, 409s and
// writes per bind (the controller's own request metrics, 409s by write), the order claims were bound
// in within a pool, latency, PodPool reconcile time, CPU. Claim creates and Events are not counted
// in the capacity (the same for every controller).
import { cpus } from 'node:os';
import { waitFor } from '@claimkit/e2e/harness';
import type { BenchContext } from './context.ts';
import { r1, rawPodPatchesPerSecOf } from './context.ts';
import { cpuBetween, snapshotCpu } from './process-cpu.ts';
import {
  atLeast,
  atMost,
  classifyRequests,
  diffCounts,
  histogramBetween,
  histogramSnapshot,
  histogramSummaryMs,
  latencySummary,
  parseCounter,
  poissonSchedule,
  requestCounts,
  type Target,
} from './stats.ts';
import { claimSender } from './warm-pool-scale/claims.ts';
import { controllersReady, startControllers } from './warm-pool-scale/controllers.ts';
import { sleep, type WarmPoolScaleOptions } from './warm-pool-scale/options.ts';
import { setUp } from './warm-pool-scale/set-up.ts';
import { cpuGroupsOf, settle } from './warm-pool-scale/settle.ts';
import { finish, stopAll } from './warm-pool-scale/teardown.ts';
import { warmPools } from './warm-pool-scale/warm.ts';
import { type ClaimTimes, watchPools } from './warm-pool-scale/watches.ts';

/** The loads offered, as multiples of the measured bind capacity. */
export const CAPACITY_LOADS = [0.5, 1.0, 1.5] as const;
/** Pods warmed for the whole run (every claim of every load gets its own): kwok nodes are sized for it. */
export const CAPACITY_WARM_PODS = 8000;
/** The pools the claims are spread over, round-robin (agent-sandbox's four). */
const CAPACITY_POOLS = 4;
/** API writes one bind makes (the pod's CAS, the claim's status with the binding), Events apart. */
export const WRITES_PER_BIND = 2;
/** API writes one new pod costs: the controller's create, the scheduler's binding, kwok's status. */
export const WRITES_PER_NEW_POD = 3;
/** --refill: each pool's warm buffer (agent-sandbox's pools keep 113 warm replicas). */
export const REFILL_WARM_PER_POOL = 113;
/** A claim bound this much later than a newer claim of its pool counts as served out of order. */
export const ORDER_TOLERANCE_MS = 1000;

export interface CapacityOptions {
  /** Seconds of arrivals per load (shortened so every load's claims fit the warm pods). */
  seconds: number;
  seed: number;
  concurrency: number;
  controllerArgs: string[];
  /** Pods patched to measure the API server's raw pod patches/s. */
  rawWrites: number;
  /** Pools keep a small warm buffer and make the rest of the pods on demand (see above). */
  refill: boolean;
  cleanup: boolean;
}

/**
 * Claims of one pool bound out of creation order: for each claim, how much later than it the
 * latest-bound older claim of its pool was bound (0 when every older claim was bound first).
 * `claims` are in creation order; `poolOf(i)` is claim i's pool.
 */
export function orderViolations(
  claims: ReadonlyArray<{ boundAt?: number | undefined }>,
  poolOf: (i: number) => number,
  toleranceMs = ORDER_TOLERANCE_MS,
) {
  const latestOlderBound = new Map<number, number>();
  let violations = 0;
  let worstMs = 0;
  claims.forEach((c, i) => {
    const pool = poolOf(i);
    const latest = latestOlderBound.get(pool) ?? Number.NEGATIVE_INFINITY;
    if (c.boundAt === undefined) return;
    // An older claim of this pool was bound after this one: this one jumped the queue.
    const lateness = latest - c.boundAt;
    if (lateness > toleranceMs) violations++;
    if (lateness > worstMs) worstMs = lateness;
    latestOlderBound.set(pool, Math.max(latest, c.boundAt));
  });
  return { violations, worstMs: r1(worstMs), toleranceMs };
}

/** The 409s of one window by write (claimkit_write_conflicts_total), `reconciler write` -> n. */
function conflictsByWrite(before: string, after: string): Record<string, number> {
  const of = (text: string) => {
    const out: Record<string, number> = {};
    for (const s of parseCounter(text, 'claimkit_write_conflicts_total')) {
      const k = `${s.labels.reconciler ?? ''} ${s.labels.write ?? ''}`;
      out[k] = (out[k] ?? 0) + s.value;
    }
    return out;
  };
  return diffCounts(of(before), of(after));
}

const isPodPool = (l: Record<string, string>) => l.kind === 'PodPool';

export async function benchCapacity(ctx: BenchContext, o: CapacityOptions) {
  const warmPods = o.refill ? REFILL_WARM_PER_POOL * CAPACITY_POOLS : CAPACITY_WARM_PODS;
  const writesPerClaim = WRITES_PER_BIND + (o.refill ? WRITES_PER_NEW_POD : 0);
  const wps: WarmPoolScaleOptions = {
    warm: warmPods,
    refill: CAPACITY_WARM_PODS - warmPods,
    steady: 0,
    rate: 0,
    burst: 0,
    namespaces: 1,
    pools: CAPACITY_POOLS,
    key: o.refill ? 'capacity-refill' : 'capacity',
    controllerArgs: o.controllerArgs,
    concurrency: o.concurrency,
    rawWrites: o.rawWrites,
    cleanup: o.cleanup,
  };
  const run = await setUp(ctx, wps);
  const view = watchPools(ctx, run);
  const controllers = await startControllers(ctx, wps, run);
  const stop = () => stopAll(controllers, view, {});
  try {
    await controllersReady(controllers, ctx.say);
    const warm = await warmPools(ctx, wps, run, view);
    const cpuGroups = cpuGroupsOf(controllers.pids);
    await settle(cpuGroups);

    // The API server's capacity, now, with the controller watching: Idle pods of the pools patched
    // (the write a bind makes first). Measured again at the end: a slower end says the run slowed.
    const pods = (await ctx.kube.list('Pod', { namespace: run.ns })).items;
    // Each pod as often as it takes to make rawWrites patches (a refill run warms few pods).
    const idle = Array.from({ length: Math.min(o.rawWrites, pods.length * 4) }, (_, i) => ({
      namespace: run.ns,
      name: pods[i % pods.length]!.metadata.name,
    }));
    const rawConcurrency = Math.max(16, o.concurrency * 2);
    const podPatchesPerSec = await rawPodPatchesPerSecOf(ctx, idle, rawConcurrency);
    const bindsPerSecCapacity = podPatchesPerSec / writesPerClaim;
    ctx.say(
      `API server: ${r1(podPatchesPerSec)} pod patches/s -> capacity ${r1(bindsPerSecCapacity)} claims/s (${writesPerClaim} writes each)`,
    );
    await settle(cpuGroups);

    const loadSum = CAPACITY_LOADS.reduce((a, b) => a + b, 0);
    // Every claim of the run gets a warm pod: the phases are shortened to fit them.
    // binds: every claim takes a warm pod; refill: a new one (maxPods leaves room for that many).
    const podsForClaims = o.refill ? CAPACITY_WARM_PODS - warmPods : CAPACITY_WARM_PODS;
    const seconds = Math.min(o.seconds, podsForClaims / (loadSum * bindsPerSecCapacity));
    const sender = claimSender(ctx, run, view);
    let next = 0;
    const loads = [];
    for (const [k, load] of CAPACITY_LOADS.entries()) {
      const rate = load * bindsPerSecCapacity;
      const n = Math.floor(rate * seconds);
      const schedule = poissonSchedule(n, rate, o.seed + k);
      const first = next;
      next += n;
      const names = Array.from({ length: n }, (_, i) => `${run.nsOf(first + i)}/l${k}-${first + i}`);
      ctx.say(`load ${load}x: ${n} claims at ${r1(rate)}/s (Poisson, seed ${o.seed + k}) ...`);
      const m0 = await controllers.scrape();
      const cpu0 = snapshotCpu(cpuGroups);
      const t0 = performance.now();
      const inFlight: Promise<unknown>[] = [];
      let sendLateMax = 0;
      for (let i = 0; i < n; i++) {
        await sleep(t0 + schedule[i]! - performance.now());
        sendLateMax = Math.max(sendLateMax, performance.now() - t0 - schedule[i]!);
        inFlight.push(sender.create(`l${k}-${first + i}`, first + i));
      }
      await Promise.all(inFlight);
      await view.awaitBound(next, `load ${load}x`);
      const times = names.map((nm) => view.claims.get(nm) ?? ({} as ClaimTimes));
      const lastBound = Math.max(...times.map((t) => t.boundAt ?? Number.NaN));
      const busySeconds = (lastBound - t0) / 1000;
      const cpu = cpuBetween(cpu0, snapshotCpu(cpuGroups), busySeconds);
      await sleep(3000); // the no-op reconciles and coalesced pool writes that follow the last binds
      const m1 = await controllers.scrape();
      const requests = classifyRequests(diffCounts(requestCounts(m0), requestCounts(m1)), n);
      const throughput = n / busySeconds;
      const poolReconcile = histogramSummaryMs(
        histogramBetween(
          histogramSnapshot(m0, 'claimkit_reconcile_duration_seconds', isPodPool),
          histogramSnapshot(m1, 'claimkit_reconcile_duration_seconds', isPodPool),
        ),
      );
      const result = {
        load,
        offeredPerSec: r1(rate),
        claims: n,
        sendLateMaxMs: r1(sendLateMax),
        busySeconds: r1(busySeconds),
        bindsPerSec: r1(throughput),
        ofCapacity: Math.round((throughput / bindsPerSecCapacity) * 100) / 100,
        createSentToBound: latencySummary(
          times
            .filter((t) => t.boundAt !== undefined && t.sentAt !== undefined)
            .map((t) => t.boundAt! - t.sentAt!),
        ),
        order: orderViolations(times, (i) => (first + i) % CAPACITY_POOLS),
        // The same by when each claim's pod CAS landed (its bind decided), before the spec and status
        // writes: what is out of order here is the turns', the rest is the writes' latency.
        orderOfPodCas: orderViolations(
          times.map((t) => ({ boundAt: t.podLabelledAt })),
          (i) => (first + i) % CAPACITY_POOLS,
        ),
        requests,
        conflictsByWrite: conflictsByWrite(m0, m1),
        poolReconcile,
        cpu,
        controllerCpuMsPerClaim: r1(((cpu.controller?.cpuSeconds ?? 0) / n) * 1000),
      };
      ctx.say(`load ${load}x done: ${JSON.stringify(result)}`);
      loads.push(result);
      // A refill run starts the next load with the warm buffer made up again.
      if (o.refill)
        await waitFor(
          `every pool back to ${REFILL_WARM_PER_POOL} Idle Ready pods`,
          () => view.poolsHave(() => REFILL_WARM_PER_POOL),
          { timeoutMs: 600_000, intervalMs: 250 },
        );
      await settle(cpuGroups);
    }
    const endPatchesPerSec = await rawPodPatchesPerSecOf(ctx, idle, rawConcurrency);
    const result = {
      cores: cpus().length,
      loadBefore: run.loadBefore,
      warmSeconds: r1(warm.warmSeconds),
      secondsPerLoad: r1(seconds),
      raw: {
        concurrency: rawConcurrency,
        podPatchesPerSec: r1(podPatchesPerSec),
        podPatchesPerSecAtEnd: r1(endPatchesPerSec),
        writesPerClaim,
        refill: o.refill,
        bindsPerSecCapacity: r1(bindsPerSecCapacity),
      },
      loads,
      createErrors: sender.errors,
    };
    return await finish(ctx, wps, run, result, undefined, stop);
  } finally {
    await stop();
  }
}

export type CapacityResult = Awaited<ReturnType<typeof benchCapacity>>;

/** Issue 41's targets per load, met or missed. */
export function capacityRows(r: CapacityResult): Array<[string, Target]> {
  const rows: Array<[string, Target]> = [];
  for (const l of r.loads) {
    const at = `${l.load}x`;
    if (l.load >= 1) rows.push([`${at}: binds/s / capacity`, atLeast(l.ofCapacity, 0.9)]);
    rows.push([`${at}: 409s per bind`, atMost(l.requests.conflictsPerBind, 0.05)]);
    rows.push([
      `${at}: claims bound out of order (> ${ORDER_TOLERANCE_MS} ms)`,
      atMost(l.order.violations, 0),
    ]);
    rows.push([`${at}: PodPool reconcile p99 ms (wall)`, atMost(l.poolReconcile.p99Ms, 100)]);
  }
  return rows;
}
