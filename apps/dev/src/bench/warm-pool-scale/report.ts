// The run's result as stored under its key in bench/results.json (pure but for endOfRun, which reads
// the machine once the measuring is done): the method in words, each phase's figures, the targets.
import { loadavg } from 'node:os';
import { r1 } from '../context.ts';
import { CONTROLLER_NODE_FLAGS } from '../controller-process.ts';
import type { CpuSnapshot } from '../process-cpu.ts';
import { CANARY_MS } from '../window-probe.ts';
import type { BurstPhase } from './burst.ts';
import type { Controllers } from './controllers.ts';
import { cpuSecondsOf, gaugeMax, type WarmPoolScaleFigures } from './figures.ts';
import { SETTLED_CORES, type WarmPoolScaleOptions, WINDOW_MS } from './options.ts';
import type { RawWrites } from './raw-writes.ts';
import type { RunPlan } from './set-up.ts';
import type { SteadyPhase } from './steady.ts';

/** What the report reads from the machine and the controllers once the measuring is done. */
export interface EndOfRun {
  loadAvgAfter: number[];
  /** Wall clock of the steady phase's second 0, to line its windows up with the components' logs. */
  steadyStartedAt: string;
  /** A cluster given by CLAIMKIT_BENCH_KUBECONFIG (it may hold other claimkit objects). */
  givenCluster: boolean;
  memoryLimit?: {
    limitMb: number;
    oomKills: number | null;
    cgroupPeakMb: number | null;
    died: string | null;
  };
}

export function endOfRun(controllers: Controllers, steadyT0: number): EndOfRun {
  const { cgroup } = controllers;
  return {
    loadAvgAfter: loadavg().map(r1),
    steadyStartedAt: new Date(Date.now() - (performance.now() - steadyT0)).toISOString(),
    givenCluster: Boolean(process.env.CLAIMKIT_BENCH_KUBECONFIG),
    ...(cgroup
      ? {
          memoryLimit: {
            limitMb: Math.round(cgroup.limitBytes / 2 ** 20),
            oomKills: cgroup.oomKills() ?? null,
            cgroupPeakMb: Math.round((cgroup.peakBytes() ?? 0) / 2 ** 20) || null,
            died: controllers.died() ?? null,
          },
        }
      : {}),
  };
}

export interface ReportInput {
  o: WarmPoolScaleOptions;
  run: Pick<RunPlan, 'plan' | 'namespaces' | 'maxPods' | 'perNamespace' | 'loadBefore'>;
  /** Controller processes. */
  shards: number;
  warm: { warmSeconds: number };
  settled: { settleSeconds: number; quietCores: number; rssMb: number };
  steady: Pick<SteadyPhase, 'seconds' | 'sendLateMax' | 'cpu' | 'cpu0' | 'cpu1' | 'rssMb'>;
  burst: Pick<
    BurstPhase,
    'refillSeconds' | 'refillAfterSeconds' | 'createSeconds' | 'seconds' | 'cpu' | 'rssMb'
  >;
  raw: Pick<
    RawWrites,
    | 'concurrency'
    | 'writes'
    | 'configMapCreatesPerSec'
    | 'podsPatched'
    | 'podPatchesPerSec'
    | 'claimsObserved'
    | 'metricsEnd'
    | 'rssMb'
  >;
  figures: WarmPoolScaleFigures;
  createErrors: string[];
  /** Pods the bench's watches saw. */
  podsSeen: number;
  end: EndOfRun;
}

/** The method in words: what was run and how each figure is measured. */
function method({ o, run, shards, raw, end }: ReportInput): string {
  const { plan, maxPods, perNamespace } = run;
  const pools =
    plan.length === 1
      ? `PodPool minIdle ${o.warm}, maxPods ${maxPods}`
      : `${plan.length} PodPools over ${o.namespaces} namespace(s) (${plan.length / o.namespaces} per namespace), minIdle ${plan[0]!.minIdle}${plan.some((p) => p.minIdle !== plan[0]!.minIdle) ? ' or one less' : ''} each (${o.warm} in all), maxPods = minIdle + an even share of ${o.refill} (${maxPods} in all, at most ${perNamespace} pods per namespace)`;
  return [
    `kwok; ${pools}: the pools start with ${o.warm} warm pods and top up by ${o.refill} while the steady claims bind, so the burst finds ${o.burst} warm pods; nothing is released, so pods needed = ${maxPods}.`,
    `Controller: dist/main.js (node ${CONTROLLER_NODE_FLAGS.join(' ')}) in its own process, --concurrency ${o.concurrency}${o.controllerArgs.length ? ` ${o.controllerArgs.join(' ')}` : ''}, ${o.namespaces === 1 ? '--namespace (one namespace)' : `watching all namespaces (its --namespace takes one or none; the bench's ${o.namespaces} namespaces are the only ones with claimkit objects${end.givenCluster ? ' unless the given cluster has others' : ''}; it also sees the cluster's system pods)`}.`,
    `Settle: after warm-up, the steady phase starts once the control plane and the controller together used < ${SETTLED_CORES} cores over 2 s (at most 2 min).`,
    `Steady: ${o.steady} PodClaims created open-loop at ${o.rate}/s ${o.poissonSeed === undefined ? 'evenly spaced' : `as a Poisson process (exponential inter-arrival times from a PRNG seeded ${o.poissonSeed})`} (each create sent on schedule, not waiting for earlier answers), claim i to pool i mod ${plan.length}. Burst: ${o.burst} creates sent at once (round-robin likewise) after each pool has its share of them Idle and Ready again.`,
    "Latency: measured by the bench client on its own PodClaim watch: arrival of the claim's ADDED event -> arrival of its first event with phase Bound and spec.podName (same clock, same stream: creationTimestamp has 1 s resolution and the watch delay cancels); createSentToBound adds the create's round trip.",
    "Requests: the controller's claimkit_api_requests_total (its client counts every request by verb/resource/code) diffed around each phase; reads = get/list/watch, writes = create/update/patch/delete (status included), Events apart; writesPerBind = successful Pod/PodClaim writes other than pod creates per claim.",
    `Raw writes: after the burst, once the pools had refilled the pods it took (min(minIdle, maxPods - claims) Idle Ready each) and 1 s more, controller still running, ${raw.writes} ConfigMap creates, then a merge patch of ${raw.podsPatched} Bound pods' annotations, ${raw.concurrency} in flight, same client as the claims.`,
    'Burst target: 2 x (burst / bindsPerSecCapacity), bindsPerSecCapacity = rawPodPatchesPerSec / writesPerBind (the binds/s the API server allows for the writes a bind needs).',
    'RSS: /proc/<pid>/status VmRSS of the controller process, sampled every 250 ms.',
    'Efficiency (steady phase): controller and kube-apiserver CPU-seconds (/proc/<pid>/stat) per bound claim and their ratio; 409s per bind from claimkit_api_requests_total (any verb and resource).',
    `Windows (steady phase, ${WINDOW_MS / 1000} s each, claims by arrival): beside the claims' latencies, the window probe's scrapes of the controller's /metrics (claimkit_api_request_duration_seconds by verb and resource, nodejs_gc_duration_seconds, claimkit_reconcile_duration_seconds, workqueue_queue_duration_seconds, nodejs_eventloop_lag_max_seconds: its longest event-loop stall since the previous scrape) and of kube-apiserver's (apiserver_request_duration_seconds for pods and podclaims, etcd_request_duration_seconds) and, on the bench's own control plane, etcd's (backend commits, compactions: the API server compacts every 5 min) at each window's bounds, quantiles interpolated inside buckets as histogram_quantile does; and a canary pod (no pool selects it) patched every ${CANARY_MS} ms by the bench: each patch's answer time and its event's arrival on the bench's pod watch after the answer. The probe's scrapes and patches (the API server's /metrics every ${WINDOW_MS / 1000} s, 2 pod patches/s) are counted in the API server's CPU.`,
    ...(shards > 1
      ? [
          `Shards: ${shards} controller processes, shard i with --shard i/${shards} (the pools hashed over them); CPU and requests are all shards' together, shards.cpuMsPerClaim each one's (of all claims), RSS and heap the largest process's.`,
        ]
      : []),
    ...(o.cpuProfDir
      ? [
          "CPU profile: the controller's steady phase only (V8 profiler through its inspector, --inspect on loopback, 1 ms sampling), busy time only ((idle) left out); the controller's CPU figures include the profiler's own cost.",
        ]
      : []),
  ].join(' ');
}

/** Each shard's share of the steady phase: CPU ms per claim of all claims, and cores. */
function shardShares(
  shards: number,
  steadyClaims: number,
  steady: { cpu: Record<string, { cores: number }>; cpu0: CpuSnapshot; cpu1: CpuSnapshot },
) {
  const shardCpu = Array.from({ length: shards }, (_, i) => cpuSecondsOf(steady, `controller shard ${i}`));
  return {
    count: shards,
    cpuMsPerClaim: shardCpu.map((s) => Math.round((s / steadyClaims) * 1e6) / 1000),
    cores: shardCpu.map((_, i) => steady.cpu[`controller shard ${i}`]?.cores ?? Number.NaN),
    busiestCpuMsPerClaim: Math.round((Math.max(...shardCpu) / steadyClaims) * 1e6) / 1000,
  };
}

export function warmPoolScaleReport(input: ReportInput) {
  const { o, run, shards, warm, settled, steady, burst, raw, figures: f, end } = input;
  const { plan, namespaces, maxPods } = run;
  const overCreation = Math.max(f.podCreates, input.podsSeen) - maxPods;
  return {
    method: method(input),
    load: { loadAvgBefore: run.loadBefore, loadAvgAfter: end.loadAvgAfter },
    warm: o.warm,
    maxPods,
    namespaces: o.namespaces,
    pools: plan.length === 1 ? undefined : plan.map((p) => ({ ...p, namespace: namespaces[p.namespace] })),
    controllerArgs: o.controllerArgs,
    arrivals: o.poissonSeed === undefined ? 'even' : { poisson: { seed: o.poissonSeed } },
    steadyClaims: o.steady,
    rate: o.rate,
    burstClaims: o.burst,
    concurrency: o.concurrency,
    warmSeconds: r1(warm.warmSeconds),
    /** After warm-up, until the control plane and the controller used < SETTLED_CORES together. */
    settle: {
      seconds: r1(settled.settleSeconds),
      cores: Math.round(settled.quietCores * 100) / 100,
      limitCores: SETTLED_CORES,
    },
    steady: {
      startedAt: end.steadyStartedAt,
      seconds: r1(steady.seconds),
      sendLateMaxMs: r1(steady.sendLateMax),
      latency: f.steadyLatency,
      latencyOverTime: f.steadyOverTime,
      requests: f.steadyRequests,
      reconciles: f.steadyReconcileCount,
      /** Per kind: reconciles, their seconds and mean ms (a pool's should not grow with its idle pods). */
      reconcilesByKind: f.steadyReconciles,
      events: f.steadyEvents,
      /** CPU each process used during the steady phase (cores = CPU seconds / phase seconds). */
      cpu: steady.cpu,
      efficiency: f.steadyEfficiency,
    },
    burst: {
      /** From the last steady claim Bound until `burst` pods were Idle and Ready again. */
      poolRefillSeconds: r1(burst.refillSeconds),
      /** From every burst claim seen Bound until the pools had refilled (before the raw writes). */
      refillAfterSeconds: r1(burst.refillAfterSeconds),
      createSeconds: r1(burst.createSeconds),
      allBoundSeconds: r1(burst.seconds),
      bindsPerSec: r1(o.burst / burst.seconds),
      latency: f.burstLatency,
      requests: f.burstRequests,
      /** CPU each process used from the first create until every claim was seen Bound. */
      cpu: burst.cpu,
      targetSeconds: r1(f.burstTargetSeconds),
    },
    createErrors: input.createErrors.length,
    createErrorSamples: input.createErrors.slice(0, 5),
    pods: {
      needed: maxPods,
      createsIssued: f.podCreates,
      seenByBenchWatch: input.podsSeen,
      overCreation,
    },
    raw: {
      configMapCreatesPerSec: r1(raw.configMapCreatesPerSec),
      podPatchesPerSec: r1(raw.podPatchesPerSec),
      concurrency: raw.concurrency,
      bindsPerSecCapacity: r1(f.bindsPerSecCapacity),
    },
    ...(end.memoryLimit ? { memoryLimit: end.memoryLimit } : {}),
    rssMb: {
      afterWarm: settled.rssMb,
      afterSteady: steady.rssMb,
      afterBurst: burst.rssMb,
      end: raw.rssMb,
      peak: f.rssPeakMb,
    },
    // The V8 heap at the end (live objects plus garbage not yet collected): RSS also holds what a
    // heap sized from the machine's memory (no container limit here) grew to and kept.
    heapMbEnd: {
      used: Math.round(gaugeMax(raw.metricsEnd, 'nodejs_heap_size_used_bytes') / 1e6),
      total: Math.round(gaugeMax(raw.metricsEnd, 'nodejs_heap_size_total_bytes') / 1e6),
      /** Buffers and other memory outside the V8 heap that JavaScript objects hold. */
      external: Math.round(gaugeMax(raw.metricsEnd, 'nodejs_external_memory_bytes') / 1e6),
    },
    ...(f.comparison ? { comparison: f.comparison } : {}),
    ...(shards > 1 ? { shards: shardShares(shards, o.steady, steady) } : {}),
    requestsWholeRun: f.allRequests,
    claimsObserved: raw.claimsObserved,
    targets: {
      steadyP50Ms: 100,
      steadyP99Ms: 500,
      writesPerBind: 2,
      rssMb: 200,
      overCreation: 0,
      meets: {
        steadyP50: f.steadyLatency.addedToBound.p50Ms <= 100,
        steadyP99: f.steadyLatency.addedToBound.p99Ms <= 500,
        burst: burst.seconds <= f.burstTargetSeconds,
        writesPerBind: f.steadyRequests.writesPerBind <= 2 && f.burstRequests.writesPerBind <= 2,
        rss: f.rssPeakMb <= 200,
        overCreation: overCreation <= 0,
      },
    },
  };
}
