// Burst: `burst` claims at once, once each pool has its share of them warm again (the pools top
// themselves up); then the pools refill what the burst took, before the raw writes measure the API
// server.
import { cpus } from 'node:os';
import { waitFor } from '@claimkit/e2e/harness';
import { cpuBetween, snapshotCpu } from '../process-cpu.ts';
import { type PoolPlan, splitEvenly } from '../stats.ts';
import { sleep } from './options.ts';
import type { Phase } from './phase.ts';

export interface BurstPhase {
  /** From the last steady claim Bound until each pool had its share of the burst Idle and Ready. */
  refillSeconds: number;
  /** The claims as the view knows them (`ns/b-i`). */
  names: string[];
  createSeconds: number;
  /** From the first create to the last claim's Bound event. */
  seconds: number;
  /** CPU each process used from the first create until every claim was seen Bound. */
  cpu: ReturnType<typeof cpuBetween>;
  /** The controllers' /metrics before the creates (2 s after the refill) and 3 s after the last bind. */
  metricsBefore: string;
  metricsAfter: string;
  rssMb: number;
  /** From every burst claim seen Bound until the pools had refilled. */
  refillAfterSeconds: number;
}

/**
 * The Idle Ready pods each pool settles at once every claim is bound: min(minIdle, maxPods - its
 * claims), its claims being its round-robin share of the steady and the burst claims.
 */
export function settledIdle(plan: readonly PoolPlan[], steady: number, burst: number): number[] {
  const steadyShare = splitEvenly(steady, plan.length);
  const burstShare = splitEvenly(burst, plan.length);
  return plan.map((p, j) => Math.min(p.minIdle, p.maxPods - (steadyShare[j]! + burstShare[j]!)));
}

export async function burstPhase({
  ctx,
  o,
  run,
  view,
  controllers,
  sender,
  cpuGroups,
}: Phase): Promise<BurstPhase> {
  const { say } = ctx;
  const { plan } = run;
  const tr0 = performance.now();
  const burstShare = splitEvenly(o.burst, plan.length);
  await waitFor(`${o.burst} Idle Ready pods for the burst`, () => view.poolsHave((j) => burstShare[j]!), {
    timeoutMs: 900_000,
    intervalMs: 250,
  });
  const refillSeconds = (performance.now() - tr0) / 1000;
  await sleep(2000);
  const m2 = await controllers.scrape();
  say(`burst: ${o.burst} claims at once (${view.idleTotal()} Idle Ready pods) ...`);
  const names = Array.from({ length: o.burst }, (_, i) => `${run.nsOf(i)}/b-${i}`);
  const cpuB0 = snapshotCpu(cpuGroups);
  const tb0 = performance.now();
  await Promise.all(names.map((_, i) => sender.create(`b-${i}`, i)));
  const createSeconds = (performance.now() - tb0) / 1000;
  await view.awaitBound(o.steady + o.burst, 'burst');
  // Who had the machine's cores while the burst was bound: the burst's binds/s is the API server's
  // when it takes nearly all of them, the controller's when its one thread is near a core.
  const tAllBound = performance.now();
  const cpu = cpuBetween(cpuB0, snapshotCpu(cpuGroups), (tAllBound - tb0) / 1000);
  say(
    `burst CPU, cores of ${cpus().length}: ${Object.entries(cpu)
      .map(([name, c]) => `${name} ${c.cores}`)
      .join(', ')}`,
  );
  const lastBound = Math.max(...names.map((n) => view.claims.get(n)?.boundAt ?? Number.NaN));
  const seconds = (lastBound - tb0) / 1000;
  await sleep(3000);
  const m3 = await controllers.scrape();
  const rssMb = controllers.rssNow();
  // The raw writes that follow measure the API server's capacity: not while the pools are still
  // creating, scheduling and starting the pods the burst took (that work would be measured as a
  // slower API server). Every claim is bound now, so each pool settles at min(minIdle, maxPods -
  // its claims) Idle Ready pods.
  const settled = settledIdle(plan, o.steady, o.burst);
  await waitFor(
    `the pools refilled after the burst (${settled.join('/')} Idle Ready)`,
    () => view.poolsHave((j) => settled[j]!),
    { timeoutMs: 300_000, intervalMs: 250 },
  );
  const refillAfterSeconds = (performance.now() - tAllBound) / 1000;
  await sleep(1000);
  return {
    refillSeconds,
    names,
    createSeconds,
    seconds,
    cpu,
    metricsBefore: m2,
    metricsAfter: m3,
    rssMb,
    refillAfterSeconds,
  };
}
