// Steady: `steady` claims open-loop at `rate`/s (a create is sent on schedule whether or not earlier
// ones answered), timed in windows by the window probe and its canary pod; the controller's CPU
// profile, with --cpu-prof, covers this phase only.
import { podFor, r1 } from '../context.ts';
import { type CpuSnapshot, cpuBetween, snapshotCpu } from '../process-cpu.ts';
import { arrivalSchedule, classifyRequests, diffCounts, poissonSchedule, requestCounts } from '../stats.ts';
import { CANARY_ANNOTATION, WindowProbe } from '../window-probe.ts';
import { latencyOf } from './latency.ts';
import { CANARY_POD, sleep, WINDOW_MS } from './options.ts';
import type { Phase } from './phase.ts';
import type { Instruments } from './teardown.ts';

export interface SteadyPhase {
  /** performance.now() at the phase's second 0 (the probe's start). */
  t0: number;
  /** Each claim's send time, ms after t0. */
  schedule: number[];
  /** The claims as the view knows them (`ns/s-i`). */
  names: string[];
  /** The latest a create was sent after its time, ms. */
  sendLateMax: number;
  seconds: number;
  cpu0: CpuSnapshot;
  cpu1: CpuSnapshot;
  cpu: ReturnType<typeof cpuBetween>;
  probeWindows: Awaited<ReturnType<WindowProbe['stop']>>;
  /** The controller's CPU profile of the phase, with --cpu-prof. */
  profile: Awaited<ReturnType<NonNullable<Instruments['profiler']>['stop']>> | undefined;
  /** The controllers' /metrics before and after (3 s after the last bind). */
  metricsBefore: string;
  metricsAfter: string;
  rssMb: number;
}

export async function steadyPhase(
  { ctx, o, run, view, controllers, sender, cpuGroups }: Phase,
  instruments: Instruments,
): Promise<SteadyPhase> {
  const { kube, say } = ctx;
  const { ns } = run;
  // The canary the window probe patches: a pod no pool selects, in the first namespace.
  await kube.create(podFor(CANARY_POD, ns, { 'bench.claimkit.dev/canary': 'true' }));
  const probe = new WindowProbe({
    windowMs: WINDOW_MS,
    scrapeController: controllers.scrape,
    scrapeApiServer: async () => {
      const r = await kube.raw('GET', '/metrics');
      if (r.status !== 200) throw new Error(`kube-apiserver /metrics answered ${r.status}`);
      return r.text;
    },
    ...(ctx.etcdUrl
      ? {
          scrapeEtcd: async () => {
            const r = await fetch(`${ctx.etcdUrl}/metrics`, { signal: AbortSignal.timeout(5000) });
            if (!r.ok) throw new Error(`etcd /metrics answered ${r.status}`);
            return r.text();
          },
        }
      : {}),
    patchCanary: (seq) =>
      kube.patch(
        'Pod',
        { namespace: ns, name: CANARY_POD },
        { metadata: { annotations: { [CANARY_ANNOTATION]: String(seq) } } },
      ),
    say,
  });
  instruments.probe = probe;
  view.onCanary = (seq, at) => probe.canarySeen(seq, at);
  await instruments.profiler?.start();
  const cpu0 = snapshotCpu(cpuGroups);
  const m0 = await controllers.scrape();
  const schedule =
    o.poissonSeed === undefined
      ? arrivalSchedule(o.steady, o.rate)
      : poissonSchedule(o.steady, o.rate, o.poissonSeed);
  say(
    `steady: ${o.steady} claims at ${o.rate}/s${o.poissonSeed === undefined ? '' : ` (Poisson, seed ${o.poissonSeed})`} ...`,
  );
  const names = schedule.map((_, i) => `${run.nsOf(i)}/s-${i}`);
  const t0 = await probe.start();
  let sendLateMax = 0;
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < o.steady; i++) {
    await sleep(t0 + schedule[i]! - performance.now());
    sendLateMax = Math.max(sendLateMax, performance.now() - t0 - schedule[i]!);
    inFlight.push(sender.create(`s-${i}`, i));
  }
  await Promise.all(inFlight);
  await view.awaitBound(o.steady, 'steady');
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = snapshotCpu(cpuGroups);
  const probeWindows = await probe.stop();
  await kube.delete('Pod', { namespace: ns, name: CANARY_POD }).catch(() => {});
  const cpu = cpuBetween(cpu0, cpu1, seconds);
  const profile = await instruments.profiler?.stop().catch((e: Error) => {
    say(`the steady phase's CPU profile failed: ${e.message}`);
    return undefined;
  });
  await sleep(3000); // the no-op reconciles and coalesced pool writes that follow the last binds
  const m1 = await controllers.scrape();
  const rssMb = controllers.rssNow();

  // The steady numbers are said now, so a burst that never gets its warm pods loses nothing.
  say(
    `steady done in ${r1(seconds)} s: ${JSON.stringify({
      latency: latencyOf(view.claims, names),
      requests: classifyRequests(diffCounts(requestCounts(m0), requestCounts(m1)), o.steady),
      cpu,
      rssMb,
    })}`,
  );
  return {
    t0,
    schedule,
    names,
    sendLateMax,
    seconds,
    cpu0,
    cpu1,
    cpu,
    probeWindows,
    profile,
    metricsBefore: m0,
    metricsAfter: m1,
    rssMb,
  };
}
