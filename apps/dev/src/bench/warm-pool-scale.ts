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
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { LABEL_CLAIMED_BY, LABEL_POOL, LABEL_STATE, type Pod, type PodClaim } from '@claimkit/core';
import { repoRoot, testPool, waitFor } from '@claimkit/e2e/harness';
import {
  type BenchContext,
  benchNamespace,
  cleanup,
  isReady,
  podFor,
  r1,
  rawConfigMapCreatesPerSec,
  rawPodPatchesPerSecOf,
} from './context.ts';
import { CONTROLLER_NODE_FLAGS, freePort, rssMb, spawnShippedController } from './controller-process.ts';
import { connectProfiler, type PhaseProfiler } from './inspector-profile.ts';
import { createMemoryCgroup } from './memory-cgroup.ts';
import { componentPids, cpuBetween, snapshotCpu } from './process-cpu.ts';
import { summariseProfile } from './profile-summary.ts';
import {
  arrivalSchedule,
  atMost,
  classifyRequests,
  diffCounts,
  efficiency,
  latencySummary,
  parseCounter,
  planPools,
  poissonSchedule,
  reconcilesByKind,
  requestCounts,
  splitEvenly,
  type Target,
  targetTable,
  type warmPoolBaseline,
} from './stats.ts';
import { CANARY_ANNOTATION, CANARY_MS, WindowProbe, windowLine } from './window-probe.ts';

export interface WarmPoolScaleOptions {
  /** Warm pods in all: the pools' minIdle add up to it. */
  warm: number;
  /** Pods the pools may create beyond `warm` while claims bind: their maxPods add up to warm + refill. */
  refill: number;
  steady: number;
  rate: number;
  burst: number;
  /** Namespaces the pools are spread over (the controller watches all namespaces when > 1). */
  namespaces: number;
  /** PodPools in all, the same number in each namespace. */
  pools: number;
  /** Poisson arrivals from a PRNG with this seed; evenly spaced without. */
  poissonSeed?: number;
  /** Where the run is stored in bench/results.json (also names its CPU profile). */
  key: string;
  /** Extra controller flags, passed through as given (e.g. --disable-claim-events). */
  controllerArgs: string[];
  /**
   * A run at another scale than the preset's is compared with the stored preset run (`baseline`,
   * when there is one) and held to the RSS limit (issue 22: flat in the number of pods).
   */
  compare?: { baseline: ReturnType<typeof warmPoolBaseline> };
  /** The controller's reconcile workers (--concurrency). */
  concurrency: number;
  /** Raw writes of each kind measured after the burst. */
  rawWrites: number;
  /**
   * Delete the namespace after (3,900 pods take minutes to go); false when the cluster is stopped
   * right after anyway.
   */
  cleanup: boolean;
  /**
   * Profile the controller's steady phase (V8, through its inspector) into this directory, and
   * summarise the profile in the results.
   */
  cpuProfDir?: string;
  /** Run the controller under this memory limit (a cgroup, as the chart's limits.memory). */
  memoryLimitBytes?: number;
  /**
   * Run this many controller processes, shard i with `--shard i/N` (default 1): CPU is reported for
   * all of them together and for the busiest; RSS per process (each caches everything).
   */
  shards?: number;
}

/** agent-sandbox's test: 3,700 warm pods, 3,600 claims at 30/s, 300 at once; maxPods = 3,600 + 300. */
export const WARM_POOL_SCALE_FULL = { warm: 3700, refill: 200, steady: 3600, rate: 30, burst: 300 } as const;
export const WARM_POOL_SCALE_QUICK = { warm: 370, refill: 20, steady: 360, rate: 30, burst: 30 } as const;

/** Pods the pools hold at most in all (and the kwok nodes must fit). */
export const warmPoolMaxPods = (o: { warm: number; refill: number }) => o.warm + o.refill;

/** Kubernetes' scalability threshold: pods per namespace. */
const PODS_PER_NAMESPACE_THRESHOLD = 3000;

/** The steady phase's windows: claims by arrival time, and the window probe's scrapes. */
const WINDOW_MS = 10_000;

/** The pod the window probe patches to time the API server's answers and its pod watch's delivery. */
const CANARY_POD = 'bench-canary';

/** Cores the control plane and the controller may use, together, for the cluster to count as settled. */
const SETTLED_CORES = 0.3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/**
 * A watch that resumes from the last resourceVersion when it ends (server timeout, idle close) and
 * starts over (synthetic ADDEDs again) after an error; `onEvent` sees the arrival time.
 */
function keepWatching<K extends 'Pod' | 'PodClaim'>(
  ctx: BenchContext,
  kind: K,
  ns: string,
  onEvent: (type: string, obj: K extends 'Pod' ? Pod : PodClaim, at: number) => void,
): () => void {
  let rv = '';
  let stopped = false;
  let stop = () => {};
  const start = () => {
    if (stopped) return;
    stop = ctx.kube.watch(
      kind,
      {
        namespace: ns,
        allowWatchBookmarks: true,
        ...(rv ? { resourceVersion: rv } : {}),
        inactivityMs: 120_000,
      },
      {
        onEvent: (e) => {
          const at = performance.now();
          rv = e.object.metadata.resourceVersion ?? rv;
          onEvent(e.type, e.object as unknown as K extends 'Pod' ? Pod : PodClaim, at);
        },
        onBookmark: (v) => {
          rv = v;
        },
        onClose: (err) => {
          if (err) rv = '';
          if (!stopped) setTimeout(start, err ? 500 : 0);
        },
      },
    );
  };
  start();
  return () => {
    stopped = true;
    stop();
  };
}

interface ClaimTimes {
  sentAt?: number;
  addedAt?: number;
  /** First pod event labelled claimed-by this claim (the bind's pod CAS landed). */
  podLabelledAt?: number;
  /** First claim event with spec.podName (the bind's spec write landed). */
  specAt?: number;
  boundAt?: number;
}

export async function benchWarmPoolScale(ctx: BenchContext, o: WarmPoolScaleOptions) {
  const { kube, say } = ctx;
  const maxPods = warmPoolMaxPods(o);
  const plan = planPools(o);
  const podsPerNamespace = new Map<number, number>();
  for (const p of plan)
    podsPerNamespace.set(p.namespace, (podsPerNamespace.get(p.namespace) ?? 0) + p.maxPods);
  const perNamespace = Math.max(...podsPerNamespace.values());
  if (perNamespace > PODS_PER_NAMESPACE_THRESHOLD)
    say(
      `note: ${perNamespace} pods per namespace, over Kubernetes' threshold of ${PODS_PER_NAMESPACE_THRESHOLD}`,
    );
  const loadBefore = loadavg().map(r1);
  say('building the controller (run as shipped: dist/, with its image Node flags) ...');
  execFileSync('pnpm', ['turbo', 'run', 'build', '--filter=@claimkit/controller...'], {
    cwd: repoRoot,
    stdio: 'ignore',
  });
  const prefix = o.key === 'agent-sandbox' ? 'bench-as' : 'bench-wps';
  const namespaces: string[] = [];
  for (let i = 0; i < o.namespaces; i++)
    namespaces.push(await benchNamespace(ctx, o.namespaces === 1 ? prefix : `${prefix}-${i}`));
  const ns = namespaces[0]!;
  // Claim i (steady s-i, burst b-i) goes to pool i % pools, in that pool's namespace.
  const poolOf = (i: number) => plan[i % plan.length]!;
  const nsOf = (i: number) => namespaces[poolOf(i).namespace]!;
  const poolKey = (namespace: string, pool: string) => `${namespace}/${pool}`;

  // The bench's own view, from its watches (one per namespace and kind): every pod ever seen, each
  // pool's Idle Ready pods, and per claim (`ns/name`) when its ADDED and its first Bound event arrived.
  const podsSeen = new Set<string>();
  const idleReady = new Map<string, Set<string>>(
    plan.map((p) => [poolKey(namespaces[p.namespace]!, p.name), new Set<string>()]),
  );
  const idleTotal = () => [...idleReady.values()].reduce((a, s) => a + s.size, 0);
  const claims = new Map<string, ClaimTimes>();
  let boundCount = 0;
  const boundWaiters: Array<() => void> = [];
  const stopWatches: Array<() => void> = [];
  let probe: WindowProbe | undefined;
  for (const n of namespaces) {
    stopWatches.push(
      keepWatching(ctx, 'Pod', n, (type, p, at) => {
        if (n === ns && p.metadata.name === CANARY_POD) {
          const seq = Number(p.metadata.annotations?.[CANARY_ANNOTATION]);
          if (type !== 'DELETED' && Number.isInteger(seq)) probe?.canarySeen(seq, at);
          return;
        }
        const name = `${n}/${p.metadata.name}`;
        podsSeen.add(name);
        const ok =
          type !== 'DELETED' &&
          !p.metadata.deletionTimestamp &&
          isReady(p) &&
          p.metadata.labels?.[LABEL_STATE] === 'Idle';
        const idle = idleReady.get(poolKey(n, p.metadata.labels?.[LABEL_POOL] ?? ''));
        if (ok) idle?.add(name);
        else for (const s of idleReady.values()) s.delete(name);
        const by = p.metadata.labels?.[LABEL_CLAIMED_BY];
        if (by && type !== 'DELETED') {
          const t = claims.get(`${n}/${by}`) ?? {};
          claims.set(`${n}/${by}`, t);
          t.podLabelledAt ??= at;
        }
      }),
      keepWatching(ctx, 'PodClaim', n, (type, c, at) => {
        const key = `${n}/${c.metadata.name}`;
        const t = claims.get(key) ?? {};
        claims.set(key, t);
        if (t.addedAt === undefined) t.addedAt = at;
        if (type !== 'DELETED' && c.spec.podName) t.specAt ??= at;
        if (type !== 'DELETED' && t.boundAt === undefined && c.status?.phase === 'Bound' && c.spec.podName) {
          t.boundAt = at;
          boundCount++;
          for (const w of boundWaiters.splice(0)) w();
        }
      }),
    );
  }

  const shards = o.shards ?? 1;
  if (shards > 1 && o.memoryLimitBytes !== undefined)
    throw new Error('--memory-limit runs one controller in one cgroup: not with --shards');
  const ports: number[] = [];
  for (let i = 0; i < shards; i++) ports.push(await freePort());
  // The profile is shard 0's.
  const inspectPort = o.cpuProfDir ? await freePort() : undefined;
  // The controller's --namespace takes one namespace or none (all): several namespaces are
  // watched cluster-wide, the bench's being the only ones with claimkit objects.
  const cgroup =
    o.memoryLimitBytes === undefined
      ? undefined
      : createMemoryCgroup(o.memoryLimitBytes, `claimkit-bench-${process.pid}`);
  const children = ports.map((port, i) =>
    spawnShippedController({
      kubeconfig: ctx.kubeconfig,
      namespace: o.namespaces === 1 ? ns : undefined,
      port,
      nodeFlags: inspectPort && i === 0 ? [`--inspect=127.0.0.1:${inspectPort}`] : [],
      args: [
        '--concurrency',
        String(o.concurrency),
        ...(shards > 1 ? ['--shard', `${i}/${shards}`] : []),
        ...o.controllerArgs,
      ],
      ...(cgroup ? { cgroup } : {}),
    }),
  );
  const pids = children.map((c) => c.pid!);
  // A controller that dies mid-run (killed past its memory limit, a heap out of memory) is said at
  // once; the waits that follow then fail on what they waited for.
  let stopping = false;
  let died: string | undefined;
  for (const [i, child] of children.entries()) {
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const ooms = cgroup?.oomKills();
      died = `the controller${shards > 1 ? ` (shard ${i}/${shards})` : ''} exited mid-run (${signal ? `signal ${signal}` : `code ${code}`}${ooms ? `; its memory cgroup counted ${ooms} OOM kill(s)` : ''})`;
      say(died);
    });
  }
  let profiler: PhaseProfiler | undefined;
  // RSS is per process (a container's limit applies to each shard's pod).
  const rssNow = () => Math.max(...pids.map((pid) => rssMb(pid)));
  let rssPeak = 0;
  const rssSampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssNow());
    } catch {
      // exited
    }
  }, 250);
  // Every shard's /metrics, one after the other: counters summed over lines add up over shards.
  const scrape = async () =>
    (
      await Promise.all(ports.map(async (port) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()))
    ).join('\n');
  const stopAll = async () => {
    stopping = true;
    clearInterval(rssSampler);
    probe?.cancel();
    for (const stop of stopWatches.splice(0)) stop();
    profiler?.close();
    profiler = undefined;
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null) return;
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }),
    );
    cgroup?.remove();
  };
  try {
    for (const [i, port] of ports.entries())
      await waitFor(
        `controller${shards > 1 ? ` shard ${i}` : ''} ready`,
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok,
        { timeoutMs: 120_000, intervalMs: 100 },
      );
    if (inspectPort)
      profiler = await connectProfiler(inspectPort).catch((e: Error) => {
        say(`no CPU profile: ${e.message}`);
        return undefined;
      });

    // 1. Warm: the pools' minIdle add up to warm, their maxPods to warm + refill.
    const poolsText =
      plan.length === 1
        ? `PodPool minIdle ${o.warm}, maxPods ${maxPods}`
        : `${plan.length} PodPools in ${o.namespaces} namespace(s), minIdle ${plan.map((p) => p.minIdle).join('/')}, maxPods ${plan.map((p) => p.maxPods).join('/')}`;
    say(`warming ${o.warm} pods (${poolsText}) ...`);
    const tw0 = performance.now();
    await Promise.all(
      plan.map((p) =>
        kube.create(
          testPool(namespaces[p.namespace]!, p.name, {
            minIdle: p.minIdle,
            maxPods: p.maxPods,
            image: 'registry.k8s.io/pause:3.10',
          }),
        ),
      ),
    );
    const poolsHave = (want: (j: number) => number) =>
      plan.every((p, j) => (idleReady.get(poolKey(namespaces[p.namespace]!, p.name))?.size ?? 0) >= want(j));
    let lastLog = 0;
    await waitFor(
      `${o.warm} Idle Ready pods`,
      () => {
        if (performance.now() - lastLog > 15_000) {
          lastLog = performance.now();
          say(`  ${idleTotal()}/${o.warm} Idle Ready, ${podsSeen.size} pods seen`);
        }
        return poolsHave((j) => plan[j]!.minIdle);
      },
      { timeoutMs: 1_800_000, intervalMs: 250 },
    );
    const warmSeconds = (performance.now() - tw0) / 1000;

    // 1b. Settle: the warm-up's tail (kwok's last status updates, the scheduler's and the garbage
    // collector's work on thousands of new pods, the pool's last status writes) must not land on
    // the first steady claims. Wait until the control plane and the controller together stay under
    // SETTLED_CORES over a 2 s window (at most 2 min), as a warm pool is before claims arrive.
    const cpuGroups = new Map([
      ...componentPids(),
      ['controller', pids],
      ...(shards > 1 ? pids.map((pid, i): [string, number[]] => [`controller shard ${i}`, [pid]]) : []),
      ['bench client', [process.pid]],
    ]);
    const tq0 = performance.now();
    let quietCores = Number.NaN;
    for (let prev = snapshotCpu(cpuGroups); ; ) {
      await sleep(2000);
      const cur = snapshotCpu(cpuGroups);
      quietCores = Object.entries(cpuBetween(prev, cur, 2))
        .filter(([name]) => name !== 'bench client' && !name.startsWith('controller shard'))
        .reduce((a, [, u]) => a + u.cores, 0);
      prev = cur;
      if (quietCores < SETTLED_CORES || performance.now() - tq0 > 120_000) break;
    }
    const settleSeconds = (performance.now() - tq0) / 1000;
    const rssWarm = rssNow();

    // 2. Steady: open loop at `rate`/s; a create is sent on schedule whether or not earlier ones answered.
    const awaitBound = async (n: number, what: string) => {
      const deadline = performance.now() + 900_000;
      let logged = performance.now();
      while (boundCount < n) {
        if (performance.now() - logged > 15_000) {
          logged = performance.now();
          say(`  ${what}: ${boundCount}/${n} Bound`);
        }
        if (performance.now() > deadline) throw new Error(`${what}: ${boundCount}/${n} Bound after 15 min`);
        await new Promise<void>((r) => {
          boundWaiters.push(r);
          setTimeout(r, 1000);
        });
      }
    };
    const createErrors: string[] = [];
    // Claims are named `ns/name`; `i` picks the pool (round-robin).
    const createClaim = (name: string, i: number) => {
      const namespace = nsOf(i);
      const t: ClaimTimes = claims.get(`${namespace}/${name}`) ?? {};
      claims.set(`${namespace}/${name}`, t);
      t.sentAt = performance.now();
      return kube
        .create({
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaim',
          metadata: { name, namespace },
          spec: { poolName: poolOf(i).name },
        } as PodClaim)
        .catch((e) => {
          createErrors.push(`${name}: ${(e as Error).message}`);
        });
    };
    // Latencies from the bench's watch: ADDED arrival -> first Bound arrival (same clock, same
    // stream, so the watch's own delivery delay cancels), and create sent -> Bound arrival.
    const latencyOf = (names: string[]) => {
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
    };
    // The canary the window probe patches: a pod no pool selects, in the first namespace.
    await kube.create(podFor(CANARY_POD, ns, { 'bench.claimkit.dev/canary': 'true' }));
    probe = new WindowProbe({
      windowMs: WINDOW_MS,
      scrapeController: scrape,
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
    await profiler?.start();
    const cpu0 = snapshotCpu(cpuGroups);
    const m0 = await scrape();
    const schedule =
      o.poissonSeed === undefined
        ? arrivalSchedule(o.steady, o.rate)
        : poissonSchedule(o.steady, o.rate, o.poissonSeed);
    say(
      `steady: ${o.steady} claims at ${o.rate}/s${o.poissonSeed === undefined ? '' : ` (Poisson, seed ${o.poissonSeed})`} ...`,
    );
    const steadyNames = schedule.map((_, i) => `${nsOf(i)}/s-${i}`);
    const ts0 = await probe.start();
    let sendLateMax = 0;
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < o.steady; i++) {
      await sleep(ts0 + schedule[i]! - performance.now());
      sendLateMax = Math.max(sendLateMax, performance.now() - ts0 - schedule[i]!);
      inFlight.push(createClaim(`s-${i}`, i));
    }
    await Promise.all(inFlight);
    await awaitBound(o.steady, 'steady');
    const steadySeconds = (performance.now() - ts0) / 1000;
    const cpu1 = snapshotCpu(cpuGroups);
    const probeWindows = await probe.stop();
    await kube.delete('Pod', { namespace: ns, name: CANARY_POD }).catch(() => {});
    const steadyCpu = cpuBetween(cpu0, cpu1, steadySeconds);
    const steadyProfile = await profiler?.stop().catch((e: Error) => {
      say(`the steady phase's CPU profile failed: ${e.message}`);
      return undefined;
    });
    await sleep(3000); // the no-op reconciles and coalesced pool writes that follow the last binds
    const m1 = await scrape();
    const rssSteady = rssNow();
    const cpuOf = (name: string) => (cpu1.get(name) ?? 0) - (cpu0.get(name) ?? 0);

    // The steady numbers are said now, so a burst that never gets its warm pods loses nothing.
    say(
      `steady done in ${r1(steadySeconds)} s: ${JSON.stringify({
        latency: latencyOf(steadyNames),
        requests: classifyRequests(diffCounts(requestCounts(m0), requestCounts(m1)), o.steady),
        cpu: steadyCpu,
        rssMb: rssSteady,
      })}`,
    );

    // 3. Burst: `burst` claims at once, once each pool has its share of them warm again (the pools
    // top themselves up).
    const tr0 = performance.now();
    const burstShare = splitEvenly(o.burst, plan.length);
    await waitFor(`${o.burst} Idle Ready pods for the burst`, () => poolsHave((j) => burstShare[j]!), {
      timeoutMs: 900_000,
      intervalMs: 250,
    });
    const refillSeconds = (performance.now() - tr0) / 1000;
    await sleep(2000);
    const m2 = await scrape();
    say(`burst: ${o.burst} claims at once (${idleTotal()} Idle Ready pods) ...`);
    const burstNames = Array.from({ length: o.burst }, (_, i) => `${nsOf(i)}/b-${i}`);
    const cpuB0 = snapshotCpu(cpuGroups);
    const tb0 = performance.now();
    await Promise.all(burstNames.map((_, i) => createClaim(`b-${i}`, i)));
    const burstCreateSeconds = (performance.now() - tb0) / 1000;
    await awaitBound(o.steady + o.burst, 'burst');
    // Who had the machine's cores while the burst was bound: the burst's binds/s is the API server's
    // when it takes nearly all of them, the controller's when its one thread is near a core.
    const tAllBound = performance.now();
    const burstCpu = cpuBetween(cpuB0, snapshotCpu(cpuGroups), (tAllBound - tb0) / 1000);
    say(
      `burst CPU, cores of ${cpus().length}: ${Object.entries(burstCpu)
        .map(([name, c]) => `${name} ${c.cores}`)
        .join(', ')}`,
    );
    const burstLastBound = Math.max(...burstNames.map((n) => claims.get(n)?.boundAt ?? Number.NaN));
    const burstSeconds = (burstLastBound - tb0) / 1000;
    await sleep(3000);
    const m3 = await scrape();
    const rssAfterBurst = rssNow();
    // The raw writes below measure the API server's capacity: not while the pools are still
    // creating, scheduling and starting the pods the burst took (that work would be measured as a
    // slower API server). Every claim is bound now, so each pool settles at min(minIdle, maxPods -
    // its claims) Idle Ready pods.
    const claimsOfPool = (j: number) =>
      [o.steady, o.burst].reduce(
        (a, n) => a + Math.floor(n / plan.length) + (j < n % plan.length ? 1 : 0),
        0,
      );
    const settledIdle = (j: number) => Math.min(plan[j]!.minIdle, plan[j]!.maxPods - claimsOfPool(j));
    await waitFor(
      `the pools refilled after the burst (${plan.map((_, j) => settledIdle(j)).join('/')} Idle Ready)`,
      () => poolsHave(settledIdle),
      { timeoutMs: 300_000, intervalMs: 250 },
    );
    const refillAfterBurstSeconds = (performance.now() - tAllBound) / 1000;
    await sleep(1000);

    // 4. Raw writes in the same run, the controller still watching: ConfigMap creates (nothing
    // watches them but the API server's own caches) and merge patches of the pool's Bound pods'
    // annotations (the write a bind makes first, with every pod watcher still there).
    const rawC = Math.max(16, o.concurrency * 2);
    const nRaw = Math.min(o.rawWrites, maxPods);
    const configMapCreatesPerSec = await rawConfigMapCreatesPerSec(ctx, ns, nRaw, rawC);
    const boundPods = [...claims.values()].length;
    const podNames = (await Promise.all(namespaces.map((n) => kube.list('PodClaim', { namespace: n }))))
      .flatMap((l) => l.items)
      .filter((c) => !!c.spec.podName)
      .map((c) => ({ namespace: c.metadata.namespace!, name: c.spec.podName! }))
      .slice(0, nRaw);
    const podPatchesPerSec = await rawPodPatchesPerSecOf(ctx, podNames, rawC);
    const m4 = await scrape();
    const rssEnd = rssNow();

    const steadyLat = latencyOf(steadyNames);
    // By arrival time in 10 s windows: a transient (the pool's first refill, a GC) shows where it is.
    const steadyOverTime = Array.from(
      { length: Math.ceil(((schedule.at(-1) ?? 0) + 1) / WINDOW_MS) },
      (_, w) => {
        const inWindow = steadyNames.filter((n) => {
          const at = (claims.get(n)?.addedAt ?? Number.NaN) - ts0;
          return at >= w * WINDOW_MS && at < (w + 1) * WINDOW_MS;
        });
        const lat = latencyOf(inWindow);
        const { n, p50Ms, p99Ms, maxMs } = lat.addedToBound;
        // Which stage a window's tail is in (controller and pod CAS, spec write, status write).
        const stagesP99Ms = {
          addedToPodLabelled: lat.stages.addedToPodLabelled.p99Ms,
          podLabelledToSpec: lat.stages.podLabelledToSpec.p99Ms,
          specToBound: lat.stages.specToBound.p99Ms,
        };
        // What the controller, the API server and the canary saw in the same window (probe's windows
        // start at ts0 + w * WINDOW_MS too; a window whose scrape failed is merged with the next).
        const fromSecond = (w * WINDOW_MS) / 1000;
        const probed = probeWindows.find((p) => Math.abs(p.fromSecond - fromSecond) < 1);
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
      },
    );
    for (const w of steadyOverTime) say(`  ${windowLine(w)}`);
    const burstLat = latencyOf(burstNames);
    const steadyReq = classifyRequests(diffCounts(requestCounts(m0), requestCounts(m1)), o.steady);
    const burstReq = classifyRequests(diffCounts(requestCounts(m2), requestCounts(m3)), o.burst);
    const allReq = diffCounts({}, requestCounts(m4));
    const podCreates = Object.entries(allReq)
      .filter(([k]) => k.startsWith('create Pod 2'))
      .reduce((a, [, v]) => a + v, 0);
    const reconciles = (text: string) =>
      parseCounter(text, 'claimkit_reconcile_total').reduce((a, s) => a + s.value, 0);
    const events = (text: string) =>
      parseCounter(text, 'claimkit_events_total').reduce((a, s) => a + s.value, 0);

    // The bind rate the API server allows: raw pod patches/s over the writes one bind needs.
    const writesPerBind = Math.max(steadyReq.writesPerBind, 1);
    const bindsPerSecCapacity = podPatchesPerSec / writesPerBind;
    const burstTargetSeconds = 2 * (o.burst / bindsPerSecCapacity);
    // Issue 22's figures for the steady phase: CPU per bound claim (unrounded CPU-second deltas).
    const steadyReconciles = reconcilesByKind(m0, m1);
    const steadyEfficiency = efficiency({
      controllerCpuSeconds: cpuOf('controller'),
      apiServerCpuSeconds: cpuOf('kube-apiserver'),
      binds: o.steady,
      conflicts409: steadyReq.conflicts409,
      writesPerBind: steadyReq.writesPerBind,
    });
    const rssPeakMb = Math.max(rssPeak, rssEnd);
    // A run at another scale than the preset's, against the stored preset run (issue 22: flat in
    // the number of pods): p50/p99 within 1.5x, controller CPU per claim within 1.2x, RSS <= 400 MB.
    const base = o.compare?.baseline;
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    const comparison = o.compare
      ? {
          ...(base
            ? {
                baseline: base,
                p50Ratio: atMost(ratio(steadyLat.addedToBound.p50Ms, base.p50Ms), 1.5),
                p99Ratio: atMost(ratio(steadyLat.addedToBound.p99Ms, base.p99Ms), 1.5),
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
    const pools =
      plan.length === 1
        ? `PodPool minIdle ${o.warm}, maxPods ${maxPods}`
        : `${plan.length} PodPools over ${o.namespaces} namespace(s) (${plan.length / o.namespaces} per namespace), minIdle ${plan[0]!.minIdle}${plan.some((p) => p.minIdle !== plan[0]!.minIdle) ? ' or one less' : ''} each (${o.warm} in all), maxPods = minIdle + an even share of ${o.refill} (${maxPods} in all, at most ${perNamespace} pods per namespace)`;
    const result = {
      method: [
        `kwok; ${pools}: the pools start with ${o.warm} warm pods and top up by ${o.refill} while the steady claims bind, so the burst finds ${o.burst} warm pods; nothing is released, so pods needed = ${maxPods}.`,
        `Controller: dist/main.js (node ${CONTROLLER_NODE_FLAGS.join(' ')}) in its own process, --concurrency ${o.concurrency}${o.controllerArgs.length ? ` ${o.controllerArgs.join(' ')}` : ''}, ${o.namespaces === 1 ? '--namespace (one namespace)' : `watching all namespaces (its --namespace takes one or none; the bench's ${o.namespaces} namespaces are the only ones with claimkit objects${process.env.CLAIMKIT_BENCH_KUBECONFIG ? ' unless the given cluster has others' : ''}; it also sees the cluster's system pods)`}.`,
        `Settle: after warm-up, the steady phase starts once the control plane and the controller together used < ${SETTLED_CORES} cores over 2 s (at most 2 min).`,
        `Steady: ${o.steady} PodClaims created open-loop at ${o.rate}/s ${o.poissonSeed === undefined ? 'evenly spaced' : `as a Poisson process (exponential inter-arrival times from a PRNG seeded ${o.poissonSeed})`} (each create sent on schedule, not waiting for earlier answers), claim i to pool i mod ${plan.length}. Burst: ${o.burst} creates sent at once (round-robin likewise) after each pool has its share of them Idle and Ready again.`,
        "Latency: measured by the bench client on its own PodClaim watch: arrival of the claim's ADDED event -> arrival of its first event with phase Bound and spec.podName (same clock, same stream: creationTimestamp has 1 s resolution and the watch delay cancels); createSentToBound adds the create's round trip.",
        "Requests: the controller's claimkit_api_requests_total (its client counts every request by verb/resource/code) diffed around each phase; reads = get/list/watch, writes = create/update/patch/delete (status included), Events apart; writesPerBind = successful Pod/PodClaim writes other than pod creates per claim.",
        `Raw writes: after the burst, once the pools had refilled the pods it took (min(minIdle, maxPods - claims) Idle Ready each) and 1 s more, controller still running, ${nRaw} ConfigMap creates, then a merge patch of ${podNames.length} Bound pods' annotations, ${rawC} in flight, same client as the claims.`,
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
      ].join(' '),
      load: { loadAvgBefore: loadBefore, loadAvgAfter: loadavg().map(r1) },
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
      warmSeconds: r1(warmSeconds),
      /** After warm-up, until the control plane and the controller used < SETTLED_CORES together. */
      settle: {
        seconds: r1(settleSeconds),
        cores: Math.round(quietCores * 100) / 100,
        limitCores: SETTLED_CORES,
      },
      steady: {
        // Wall clock of the steady phase's second 0, to line its windows up with the components' logs.
        startedAt: new Date(Date.now() - (performance.now() - ts0)).toISOString(),
        seconds: r1(steadySeconds),
        sendLateMaxMs: r1(sendLateMax),
        latency: steadyLat,
        latencyOverTime: steadyOverTime,
        requests: steadyReq,
        reconciles: reconciles(m1) - reconciles(m0),
        /** Per kind: reconciles, their seconds and mean ms (a pool's should not grow with its idle pods). */
        reconcilesByKind: steadyReconciles,
        events: events(m1) - events(m0),
        /** CPU each process used during the steady phase (cores = CPU seconds / phase seconds). */
        cpu: steadyCpu,
        efficiency: steadyEfficiency,
      },
      burst: {
        /** From the last steady claim Bound until `burst` pods were Idle and Ready again. */
        poolRefillSeconds: r1(refillSeconds),
        /** From every burst claim seen Bound until the pools had refilled (before the raw writes). */
        refillAfterSeconds: r1(refillAfterBurstSeconds),
        createSeconds: r1(burstCreateSeconds),
        allBoundSeconds: r1(burstSeconds),
        bindsPerSec: r1(o.burst / burstSeconds),
        latency: burstLat,
        requests: burstReq,
        /** CPU each process used from the first create until every claim was seen Bound. */
        cpu: burstCpu,
        targetSeconds: r1(burstTargetSeconds),
      },
      createErrors: createErrors.length,
      createErrorSamples: createErrors.slice(0, 5),
      pods: {
        needed: maxPods,
        createsIssued: podCreates,
        seenByBenchWatch: podsSeen.size,
        overCreation: Math.max(podCreates, podsSeen.size) - maxPods,
      },
      raw: {
        configMapCreatesPerSec: r1(configMapCreatesPerSec),
        podPatchesPerSec: r1(podPatchesPerSec),
        concurrency: rawC,
        bindsPerSecCapacity: r1(bindsPerSecCapacity),
      },
      ...(cgroup
        ? {
            memoryLimit: {
              limitMb: Math.round(cgroup.limitBytes / 2 ** 20),
              oomKills: cgroup.oomKills() ?? null,
              cgroupPeakMb: Math.round((cgroup.peakBytes() ?? 0) / 2 ** 20) || null,
              died: died ?? null,
            },
          }
        : {}),
      rssMb: {
        afterWarm: rssWarm,
        afterSteady: rssSteady,
        afterBurst: rssAfterBurst,
        end: rssEnd,
        peak: rssPeakMb,
      },
      // The V8 heap at the end (live objects plus garbage not yet collected): RSS also holds what a
      // heap sized from the machine's memory (no container limit here) grew to and kept.
      heapMbEnd: {
        used: Math.round(gaugeMax(m4, 'nodejs_heap_size_used_bytes') / 1e6),
        total: Math.round(gaugeMax(m4, 'nodejs_heap_size_total_bytes') / 1e6),
        /** Buffers and other memory outside the V8 heap that JavaScript objects hold. */
        external: Math.round(gaugeMax(m4, 'nodejs_external_memory_bytes') / 1e6),
      },
      ...(comparison ? { comparison } : {}),
      ...(shards > 1
        ? {
            shards: {
              count: shards,
              // Each shard's share of the steady phase: CPU ms per claim of all claims, and cores.
              cpuMsPerClaim: pids.map(
                (_, i) => Math.round((cpuOf(`controller shard ${i}`) / o.steady) * 1e6) / 1000,
              ),
              cores: pids.map((_, i) => steadyCpu[`controller shard ${i}`]?.cores ?? Number.NaN),
              busiestCpuMsPerClaim:
                Math.round(
                  (Math.max(...pids.map((_, i) => cpuOf(`controller shard ${i}`))) / o.steady) * 1e6,
                ) / 1000,
            },
          }
        : {}),
      requestsWholeRun: allReq,
      claimsObserved: boundPods,
      targets: {
        steadyP50Ms: 100,
        steadyP99Ms: 500,
        writesPerBind: 3,
        rssMb: 200,
        overCreation: 0,
        meets: {
          steadyP50: steadyLat.addedToBound.p50Ms <= 100,
          steadyP99: steadyLat.addedToBound.p99Ms <= 500,
          burst: burstSeconds <= burstTargetSeconds,
          writesPerBind: steadyReq.writesPerBind <= 3 && burstReq.writesPerBind <= 3,
          rss: rssPeakMb <= 200,
          overCreation: Math.max(podCreates, podsSeen.size) - maxPods <= 0,
        },
      },
    };
    await stopAll();
    const cpuProfile =
      steadyProfile && o.cpuProfDir ? saveProfile(o.cpuProfDir, o.key, steadyProfile) : undefined;
    if (cpuProfile) say(`steady-phase CPU profile: ${cpuProfile.file}`);
    say(JSON.stringify({ ...result, method: undefined, requestsWholeRun: undefined }));
    if (o.cleanup) await Promise.all(namespaces.map((n) => cleanup(ctx, n)));
    return { ...result, ...(cpuProfile ? { cpuProfile } : {}) };
  } finally {
    await stopAll();
  }
}

/** The largest sample of a gauge over the shards' scrapes (heap figures are per process). */
const gaugeMax = (text: string, metric: string) =>
  Math.max(0, ...parseCounter(text, metric).map((s) => s.value));

/** Writes the profile into `dir` and returns its summary (top 15 self time, categories). */
function saveProfile(dir: string, key: string, profile: Parameters<typeof summariseProfile>[0]) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${key}-steady-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  return { file, phase: 'steady', ...summariseProfile(profile, 15) };
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
