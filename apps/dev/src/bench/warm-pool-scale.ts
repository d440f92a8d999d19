// warm-pool-scale: agent-sandbox's load test on kwok. A PodPool warms `warm` pods (all Idle and
// Ready), then `steady` PodClaims arrive open-loop at `rate`/s, then `burst` at once. The controller
// runs as shipped (dist/main.js with its image's Node flags) in its own process, so its RSS, CPU
// profile and /metrics are its own and the bench client's clock is not slowed by its work.
//
// Sizing: minIdle = warm and maxPods = steady + burst, so the pool starts with `warm` warm pods, tops
// itself up to maxPods while the steady claims bind (as a warm pool under load does), and the burst
// finds `burst` warm pods. Pods needed = maxPods; nothing is released, so any create beyond that is
// over-creation.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { LABEL_CLAIMED_BY, LABEL_STATE, type Pod, type PodClaim } from '@claimkit/core';
import { repoRoot, testPool, waitFor } from '@claimkit/e2e/harness';
import {
  type BenchContext,
  benchNamespace,
  cleanup,
  isReady,
  r1,
  rawConfigMapCreatesPerSec,
  rawPodPatchesPerSec,
} from './context.ts';
import { CONTROLLER_NODE_FLAGS, freePort, rssMb, spawnShippedController } from './controller-process.ts';
import { componentPids, cpuBetween, snapshotCpu } from './process-cpu.ts';
import {
  arrivalSchedule,
  classifyRequests,
  diffCounts,
  latencySummary,
  parseCounter,
  requestCounts,
} from './stats.ts';

export interface WarmPoolScaleOptions {
  warm: number;
  steady: number;
  rate: number;
  burst: number;
  /** The controller's reconcile workers (--concurrency). */
  concurrency: number;
  /** Raw writes of each kind measured after the burst. */
  rawWrites: number;
  /**
   * Delete the namespace after (3,900 pods take minutes to go); false when the cluster is stopped
   * right after anyway.
   */
  cleanup: boolean;
  /** Write the controller's V8 CPU profile (--cpu-prof) into this directory. */
  cpuProfDir?: string;
}

export const WARM_POOL_SCALE_FULL = { warm: 3700, steady: 3600, rate: 30, burst: 300 } as const;
export const WARM_POOL_SCALE_QUICK = { warm: 370, steady: 360, rate: 30, burst: 30 } as const;

/** Pods the pool holds at most (and the kwok nodes must fit). */
export const warmPoolMaxPods = (o: { warm: number; steady: number; burst: number }) =>
  Math.max(o.warm, o.steady + o.burst);

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
  const loadBefore = loadavg().map(r1);
  say('building the controller (run as shipped: dist/, with its image Node flags) ...');
  execFileSync('pnpm', ['turbo', 'run', 'build', '--filter=@claimkit/controller...'], {
    cwd: repoRoot,
    stdio: 'ignore',
  });
  const ns = await benchNamespace(ctx, 'bench-wps');

  // The bench's own view, from its watches: every pod ever seen, the pool's Idle Ready pods, and
  // per claim when its ADDED and its first Bound event arrived.
  const podsSeen = new Set<string>();
  const idleReady = new Set<string>();
  const claims = new Map<string, ClaimTimes>();
  let boundCount = 0;
  const boundWaiters: Array<() => void> = [];
  const stopPods = keepWatching(ctx, 'Pod', ns, (type, p, at) => {
    const name = p.metadata.name;
    podsSeen.add(name);
    const ok =
      type !== 'DELETED' &&
      !p.metadata.deletionTimestamp &&
      isReady(p) &&
      p.metadata.labels?.[LABEL_STATE] === 'Idle';
    if (ok) idleReady.add(name);
    else idleReady.delete(name);
    const by = p.metadata.labels?.[LABEL_CLAIMED_BY];
    if (by && type !== 'DELETED') {
      const t = claims.get(by) ?? {};
      claims.set(by, t);
      t.podLabelledAt ??= at;
    }
  });
  const stopClaims = keepWatching(ctx, 'PodClaim', ns, (type, c, at) => {
    const t = claims.get(c.metadata.name) ?? {};
    claims.set(c.metadata.name, t);
    if (t.addedAt === undefined) t.addedAt = at;
    if (type !== 'DELETED' && c.spec.podName) t.specAt ??= at;
    if (type !== 'DELETED' && t.boundAt === undefined && c.status?.phase === 'Bound' && c.spec.podName) {
      t.boundAt = at;
      boundCount++;
      for (const w of boundWaiters.splice(0)) w();
    }
  });

  const port = await freePort();
  const metricsUrl = `http://127.0.0.1:${port}/metrics`;
  const child = spawnShippedController({
    kubeconfig: ctx.kubeconfig,
    namespace: ns,
    port,
    nodeFlags: o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : [],
    args: ['--concurrency', String(o.concurrency)],
  });
  let rssPeak = 0;
  const rssSampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssMb(child.pid!));
    } catch {
      // exited
    }
  }, 250);
  const scrape = async () => (await fetch(metricsUrl)).text();
  const stopAll = async () => {
    clearInterval(rssSampler);
    stopPods();
    stopClaims();
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  };
  try {
    await waitFor('controller ready', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, {
      timeoutMs: 120_000,
      intervalMs: 100,
    });

    // 1. Warm: minIdle = warm, maxPods = steady + burst.
    say(`warming ${o.warm} pods (PodPool minIdle ${o.warm}, maxPods ${maxPods}) ...`);
    const tw0 = performance.now();
    await kube.create(
      testPool(ns, 'warm', { minIdle: o.warm, maxPods, image: 'registry.k8s.io/pause:3.10' }),
    );
    let lastLog = 0;
    await waitFor(
      `${o.warm} Idle Ready pods`,
      () => {
        if (performance.now() - lastLog > 15_000) {
          lastLog = performance.now();
          say(`  ${idleReady.size}/${o.warm} Idle Ready, ${podsSeen.size} pods seen`);
        }
        return idleReady.size >= o.warm;
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
      ['controller', [child.pid!]],
      ['bench client', [process.pid]],
    ]);
    const tq0 = performance.now();
    let quietCores = Number.NaN;
    for (let prev = snapshotCpu(cpuGroups); ; ) {
      await sleep(2000);
      const cur = snapshotCpu(cpuGroups);
      quietCores = Object.entries(cpuBetween(prev, cur, 2))
        .filter(([name]) => name !== 'bench client')
        .reduce((a, [, u]) => a + u.cores, 0);
      prev = cur;
      if (quietCores < SETTLED_CORES || performance.now() - tq0 > 120_000) break;
    }
    const settleSeconds = (performance.now() - tq0) / 1000;
    const rssWarm = rssMb(child.pid!);

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
    const createClaim = (name: string) => {
      const t: ClaimTimes = claims.get(name) ?? {};
      claims.set(name, t);
      t.sentAt = performance.now();
      return kube
        .create({
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaim',
          metadata: { name, namespace: ns },
          spec: { poolName: 'warm' },
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
    const cpu0 = snapshotCpu(cpuGroups);
    const m0 = await scrape();
    say(`steady: ${o.steady} claims at ${o.rate}/s ...`);
    const schedule = arrivalSchedule(o.steady, o.rate);
    const steadyNames = schedule.map((_, i) => `s-${i}`);
    const ts0 = performance.now();
    let sendLateMax = 0;
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < o.steady; i++) {
      await sleep(ts0 + schedule[i]! - performance.now());
      sendLateMax = Math.max(sendLateMax, performance.now() - ts0 - schedule[i]!);
      inFlight.push(createClaim(steadyNames[i]!));
    }
    await Promise.all(inFlight);
    await awaitBound(o.steady, 'steady');
    const steadySeconds = (performance.now() - ts0) / 1000;
    const steadyCpu = cpuBetween(cpu0, snapshotCpu(cpuGroups), steadySeconds);
    await sleep(3000); // the no-op reconciles and coalesced pool writes that follow the last binds
    const m1 = await scrape();
    const rssSteady = rssMb(child.pid!);

    // The steady numbers are said now, so a burst that never gets its warm pods loses nothing.
    say(
      `steady done in ${r1(steadySeconds)} s: ${JSON.stringify({
        latency: latencyOf(steadyNames),
        requests: classifyRequests(diffCounts(requestCounts(m0), requestCounts(m1)), o.steady),
        cpu: steadyCpu,
        rssMb: rssSteady,
      })}`,
    );

    // 3. Burst: `burst` claims at once, once that many pods are warm again (the pool tops itself up).
    const tr0 = performance.now();
    await waitFor(`${o.burst} Idle Ready pods for the burst`, () => idleReady.size >= o.burst, {
      timeoutMs: 900_000,
      intervalMs: 250,
    });
    const refillSeconds = (performance.now() - tr0) / 1000;
    await sleep(2000);
    const m2 = await scrape();
    say(`burst: ${o.burst} claims at once (${idleReady.size} Idle Ready pods) ...`);
    const burstNames = Array.from({ length: o.burst }, (_, i) => `b-${i}`);
    const tb0 = performance.now();
    await Promise.all(burstNames.map(createClaim));
    const burstCreateSeconds = (performance.now() - tb0) / 1000;
    await awaitBound(o.steady + o.burst, 'burst');
    const burstLastBound = Math.max(...burstNames.map((n) => claims.get(n)?.boundAt ?? Number.NaN));
    const burstSeconds = (burstLastBound - tb0) / 1000;
    await sleep(3000);
    const m3 = await scrape();
    const rssAfterBurst = rssMb(child.pid!);

    // 4. Raw writes in the same run, the controller still watching: ConfigMap creates (nothing
    // watches them but the API server's own caches) and merge patches of the pool's Bound pods'
    // annotations (the write a bind makes first, with every pod watcher still there).
    const rawC = Math.max(16, o.concurrency * 2);
    const nRaw = Math.min(o.rawWrites, maxPods);
    const configMapCreatesPerSec = await rawConfigMapCreatesPerSec(ctx, ns, nRaw, rawC);
    const boundPods = [...claims.values()].length;
    const podNames = (await kube.list('PodClaim', { namespace: ns })).items
      .map((c) => c.spec.podName)
      .filter((n): n is string => !!n)
      .slice(0, nRaw);
    const podPatchesPerSec = await rawPodPatchesPerSec(ctx, ns, podNames, rawC);
    const m4 = await scrape();
    const rssEnd = rssMb(child.pid!);

    const steadyLat = latencyOf(steadyNames);
    // By arrival time in 10 s windows: a transient (the pool's first refill, a GC) shows where it is.
    const steadyOverTime = Array.from({ length: Math.ceil(o.steady / o.rate / 10) }, (_, w) => {
      const inWindow = steadyNames.filter((n) => {
        const at = (claims.get(n)?.addedAt ?? Number.NaN) - ts0;
        return at >= w * 10_000 && at < (w + 1) * 10_000;
      });
      const { n, p50Ms, p99Ms, maxMs } = latencyOf(inWindow).addedToBound;
      return { fromSecond: w * 10, n, p50Ms, p99Ms, maxMs };
    });
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
    const result = {
      method: [
        `kwok; PodPool minIdle ${o.warm}, maxPods ${maxPods} (= steady + burst: the pool starts with ${o.warm} warm pods and tops up to ${maxPods} while the steady claims bind, so the burst finds ${o.burst} warm pods; nothing is released, so pods needed = ${maxPods}).`,
        `Controller: dist/main.js (node ${CONTROLLER_NODE_FLAGS.join(' ')}) in its own process, --concurrency ${o.concurrency}, --namespace.`,
        `Settle: after warm-up, the steady phase starts once the control plane and the controller together used < ${SETTLED_CORES} cores over 2 s (at most 2 min).`,
        `Steady: ${o.steady} PodClaims created open-loop at ${o.rate}/s (each create sent on schedule, not waiting for earlier answers). Burst: ${o.burst} creates sent at once after ${o.burst} pods are Idle and Ready again.`,
        "Latency: measured by the bench client on its own PodClaim watch: arrival of the claim's ADDED event -> arrival of its first event with phase Bound and spec.podName (same clock, same stream: creationTimestamp has 1 s resolution and the watch delay cancels); createSentToBound adds the create's round trip.",
        "Requests: the controller's claimkit_api_requests_total (its client counts every request by verb/resource/code) diffed around each phase; reads = get/list/watch, writes = create/update/patch/delete (status included), Events apart; writesPerBind = successful Pod/PodClaim writes other than pod creates per claim.",
        `Raw writes: after the burst, controller still running, ${nRaw} ConfigMap creates, then a merge patch of ${podNames.length} Bound pods' annotations, ${rawC} in flight, same client as the claims.`,
        'Burst target: 2 x (burst / bindsPerSecCapacity), bindsPerSecCapacity = rawPodPatchesPerSec / writesPerBind (the binds/s the API server allows for the writes a bind needs).',
        'RSS: /proc/<pid>/status VmRSS of the controller process, sampled every 250 ms.',
      ].join(' '),
      load: { loadAvgBefore: loadBefore, loadAvgAfter: loadavg().map(r1) },
      warm: o.warm,
      maxPods,
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
        seconds: r1(steadySeconds),
        sendLateMaxMs: r1(sendLateMax),
        latency: steadyLat,
        latencyOverTime: steadyOverTime,
        requests: steadyReq,
        reconciles: reconciles(m1) - reconciles(m0),
        events: events(m1) - events(m0),
        /** CPU each process used during the steady phase (cores = CPU seconds / phase seconds). */
        cpu: steadyCpu,
      },
      burst: {
        /** From the last steady claim Bound until `burst` pods were Idle and Ready again. */
        poolRefillSeconds: r1(refillSeconds),
        createSeconds: r1(burstCreateSeconds),
        allBoundSeconds: r1(burstSeconds),
        bindsPerSec: r1(o.burst / burstSeconds),
        latency: burstLat,
        requests: burstReq,
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
      rssMb: {
        afterWarm: rssWarm,
        afterSteady: rssSteady,
        afterBurst: rssAfterBurst,
        end: rssEnd,
        peak: Math.max(rssPeak, rssEnd),
      },
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
          rss: Math.max(rssPeak, rssEnd) <= 200,
          overCreation: Math.max(podCreates, podsSeen.size) - maxPods <= 0,
        },
      },
    };
    await stopAll();
    say(JSON.stringify({ ...result, method: undefined, requestsWholeRun: undefined }));
    if (o.cleanup) await cleanup(ctx, ns);
    return result;
  } finally {
    await stopAll();
  }
}
