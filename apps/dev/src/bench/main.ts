// `pnpm bench`: controller benchmarks on the local control plane (the e2e harness), side by side in
// one run, merged into bench/results.json under `controller` (the `webhook` key is kept); then the
// webhook's latency benchmark (packages/webhook/bench/latency.ts) unless --controller-only.
// Not timed tests: numbers are measured and recorded, targets are reported beside them.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { configOrExit } from '@claimkit/core/options';
import { makeClients, type RealNode, repoRoot, startLocalCluster } from '@claimkit/e2e/harness';
import { agentSandboxMaxPods, agentSandboxRows, benchAgentSandbox } from './agent-sandbox.ts';
import {
  BENCHMARKS,
  type Benchmark,
  benchStartup,
  IN_PROCESS,
  ON_REAL_NODE,
  SELF_DESCRIBED,
} from './args.ts';
import { benchBinds } from './binds.ts';
import { benchCapacity, CAPACITY_WARM_PODS, capacityRows } from './capacity.ts';
import { benchContext, r1 } from './context.ts';
import { benchFinalize } from './finalize.ts';
import { benchPoolReconcile, poolReconcileRows } from './pool-reconcile.ts';
import { benchRequestCost, requestCostRows } from './request-cost.ts';
import { benchRss } from './rss.ts';
import {
  memoryLimitSuffix,
  mergeResults,
  shardsSuffix,
  type Target,
  warmPoolBaseline,
  warmPoolScaleKey,
} from './stats.ts';
import { benchTakeover } from './takeover.ts';
import { WARM_POOL_SCALE_FULL, WARM_POOL_SCALE_QUICK, warmPoolMaxPods } from './warm-pool-scale/options.ts';
import { benchWarmPoolScale, sayTargets, warmPoolScaleRows } from './warm-pool-scale.ts';
import { benchWarmStart, WARMUP_SECONDS } from './warm-start.ts';

/** Requests per request-cost mode: enough for a stable mean, about 10 s of a quiet machine. */
const REQUEST_COST_REQUESTS = 2000;

/** Pods one kwok node takes (controlplane/kwok-stages/node-initialize.yaml). */
const PODS_PER_NODE = 500;

const say = (s: string) => process.stderr.write(`[bench] ${s}\n`);
const argv = process.argv.slice(2);
const opts = configOrExit(benchStartup(argv, repoRoot), process);

// The warm-pool-scale preset, its pod count overridden by --pods (the refill stays the preset's).
const preset = opts.quick ? WARM_POOL_SCALE_QUICK : WARM_POOL_SCALE_FULL;
const warmPoolScale = { ...preset, warm: opts.pods ?? preset.warm };
const warmPoolKey = warmPoolScaleKey({
  quick: opts.quick,
  pods: warmPoolScale.warm,
  presetPods: preset.warm,
  namespaces: opts.namespaces,
  ...(opts.memoryLimitBytes !== undefined ? { memoryLimitBytes: opts.memoryLimitBytes } : {}),
  shards: opts.shards,
});
const resultKey = (name: string) =>
  name === 'warm-pool-scale'
    ? warmPoolKey
    : name === 'capacity' && opts.refill
      ? 'capacity-refill'
      : name === 'agent-sandbox'
        ? `${name}${memoryLimitSuffix(opts.memoryLimitBytes)}${shardsSuffix(opts.shards)}`
        : name;

let all: Record<string, unknown> = {};
if (existsSync(opts.results)) {
  try {
    all = JSON.parse(readFileSync(opts.results, 'utf8'));
  } catch {
    say(`${opts.results} was not JSON; starting it anew`);
  }
}
// A scaled warm-pool-scale run is compared with the stored run at the preset's scale.
const presetKey = warmPoolScaleKey({
  quick: opts.quick,
  pods: preset.warm,
  presetPods: preset.warm,
  namespaces: 1,
});
const baseline =
  warmPoolKey === presetKey
    ? undefined
    : warmPoolBaseline((all.controller as Record<string, unknown> | undefined)?.[presetKey]);
if (opts.only.includes('warm-pool-scale') && warmPoolKey !== presetKey && !baseline)
  say(`no stored ${presetKey} run in ${opts.results} to compare with: only the RSS limit is checked`);

const given = process.env.CLAIMKIT_BENCH_KUBECONFIG;
// In-process benchmarks alone (pool-reconcile) need no control plane.
const needsCluster = opts.only.some((b) => !IN_PROCESS.includes(b));
let cluster: { kubeconfigPath: string; etcdUrl?: string; stop(): Promise<void> } | undefined;
let realNodeOf: RealNode | undefined;
if (given) cluster = { kubeconfigPath: given, stop: async () => {} };
else if (needsCluster) {
  // Enough kwok nodes for the warm pools (kwok nodes take ${PODS_PER_NODE} pods each), and at least
  // 2; both pool benchmarks' pods when both run (the first's namespaces may still be going).
  const pods =
    (opts.only.includes('warm-pool-scale') ? warmPoolMaxPods(warmPoolScale) : 0) +
    (opts.only.includes('agent-sandbox') ? agentSandboxMaxPods(opts.seconds) : 0) +
    (opts.only.includes('capacity') ? CAPACITY_WARM_PODS : 0);
  const nodes = Math.max(2, Math.ceil((pods * 1.2) / PODS_PER_NODE));
  // kwok nodes only: a real node's kubelet and runtime would share the cores the figures measure;
  // warm-start runs alone (args.ts), on the real node (pods that run for real, restored by its runtime).
  const realNode = opts.only.some((b) => ON_REAL_NODE.includes(b));
  say(`starting the local control plane (${nodes} kwok nodes${realNode ? ' and the real node' : ''}) ...`);
  const local = await startLocalCluster({ log: (m) => say(m), nodes, realNode });
  cluster = local;
  if (realNode && !local.realNode)
    throw new Error(`warm-start needs the real node: ${local.realNodeMissing}`);
  realNodeOf = local.realNode;
}
const clusterCtx =
  cluster && benchContext(cluster.kubeconfigPath, makeClients(cluster.kubeconfigPath), say, cluster.etcdUrl);
/** The control plane's context: only benchmarks outside IN_PROCESS ask for it (then it was started). */
const ctx = () => {
  if (!clusterCtx) throw new Error('no control plane was started for this benchmark');
  return clusterCtx;
};

const out: Record<string, unknown> = {
  date: new Date().toISOString(),
  command: `pnpm bench${argv.length ? ` ${argv.join(' ')}` : ''}`,
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model.split(' ').slice(0, 2).join(' '),
    loadAvg1mBefore: r1(loadavg()[0]!),
  },
  cluster: given
    ? 'CLAIMKIT_BENCH_KUBECONFIG'
    : 'local control plane (apps/e2e harness: etcd, kube-apiserver, KCM, scheduler, kwok), all on this machine',
};
/** Each pool benchmark's targets with met/missed, said together at the end. */
const summaries: Array<{ title: string; rows: Array<[string, Target]> }> = [];
/** A pool benchmark's title line: its key and the steady phase's CPU-seconds per bound claim. */
const titleOf = (
  key: string,
  e: { controllerCpuSecondsPerBind: number; apiServerCpuSecondsPerBind: number },
) =>
  `${key} (steady: controller ${e.controllerCpuSecondsPerBind} CPU-s per bound claim, API server ${e.apiServerCpuSecondsPerBind})`;
const run: Record<Benchmark, { label: string; bench: () => Promise<unknown> }> = {
  takeover: { label: 'takeover latency', bench: () => benchTakeover(ctx(), opts.trials) },
  finalize: { label: 'finalize latency', bench: () => benchFinalize(ctx()) },
  binds: { label: 'binds/s', bench: () => benchBinds(ctx(), opts.binds, opts.concurrency) },
  rss: { label: 'RSS', bench: () => benchRss(ctx(), opts.rss) },
  'warm-pool-scale': {
    label: `warm-pool-scale${opts.quick ? ' (quick)' : ''} (${warmPoolKey})`,
    bench: async () => {
      const r = await benchWarmPoolScale(ctx(), {
        ...warmPoolScale,
        namespaces: opts.namespaces,
        pools: opts.namespaces,
        key: warmPoolKey,
        controllerArgs: opts.controllerArgs,
        ...(warmPoolKey === presetKey ? {} : { compare: { baseline } }),
        concurrency: opts.concurrency,
        rawWrites: 2000,
        // A local cluster is stopped right after the last benchmark; agent-sandbox may follow.
        cleanup: Boolean(given) || opts.only.includes('agent-sandbox'),
        ...(opts.cpuProfDir ? { cpuProfDir: opts.cpuProfDir } : {}),
        ...(opts.memoryLimitBytes !== undefined ? { memoryLimitBytes: opts.memoryLimitBytes } : {}),
        shards: opts.shards,
      });
      summaries.push({ title: titleOf(warmPoolKey, r.steady.efficiency), rows: warmPoolScaleRows(r) });
      return {
        date: new Date().toISOString(),
        command: out.command,
        machine: out.machine,
        quick: opts.quick,
        ...r,
      };
    },
  },
  'agent-sandbox': {
    label: 'agent-sandbox (head to head at its published load)',
    bench: async () => {
      const r = await benchAgentSandbox(ctx(), {
        seconds: opts.seconds,
        seed: opts.seed,
        concurrency: opts.concurrency,
        controllerArgs: opts.controllerArgs,
        rawWrites: 2000,
        cleanup: Boolean(given),
        ...(opts.cpuProfDir ? { cpuProfDir: opts.cpuProfDir } : {}),
        ...(opts.memoryLimitBytes !== undefined ? { memoryLimitBytes: opts.memoryLimitBytes } : {}),
        shards: opts.shards,
      });
      summaries.push({ title: titleOf('agent-sandbox', r.steady.efficiency), rows: agentSandboxRows(r) });
      return { date: new Date().toISOString(), command: out.command, machine: out.machine, ...r };
    },
  },
  capacity: {
    label: 'capacity (0.5x, 1.0x and 1.5x the bind capacity measured in the same run)',
    bench: async () => {
      const r = await benchCapacity(ctx(), {
        seconds: Math.min(opts.seconds, 30),
        seed: opts.seed,
        concurrency: opts.concurrency,
        controllerArgs: opts.controllerArgs,
        rawWrites: 2000,
        cleanup: Boolean(given),
        refill: opts.refill,
      });
      summaries.push({
        title: `capacity${opts.refill ? ' --refill' : ''} (${r.raw.bindsPerSecCapacity} claims/s: ${r.raw.podPatchesPerSec} pod patches/s ÷ ${r.raw.writesPerClaim})`,
        rows: capacityRows(r),
      });
      return { date: new Date().toISOString(), command: out.command, machine: out.machine, ...r };
    },
  },
  'pool-reconcile': {
    label: 'pool-reconcile (CPU per PodPool reconcile by Idle pods, in process)',
    bench: async () => {
      const r = await benchPoolReconcile();
      summaries.push({
        title: 'pool-reconcile (p50 CPU per reconcile after a bind)',
        rows: poolReconcileRows(r),
      });
      return { date: new Date().toISOString(), command: out.command, machine: out.machine, ...r };
    },
  },
  'warm-start': {
    label: `warm-start (claim to a Ready pod holding ${WARMUP_SECONDS} s of warm-up state: cold, restored on demand, Idle restored)`,
    bench: async () => {
      if (!realNodeOf)
        throw new Error('warm-start needs the real node (a local control plane started with it)');
      const workDir = mkdtempSync(join(tmpdir(), 'claimkit-bench-warm-'));
      try {
        const r = await benchWarmStart(ctx(), realNodeOf, {
          restores: opts.restores,
          coldTrials: 3,
          idleTrials: 10,
          workDir,
        });
        return {
          date: new Date().toISOString(),
          command: out.command,
          machine: out.machine,
          runtime: realNodeOf.runtimeVersion,
          ...r,
        };
      } finally {
        rmSync(workDir, { recursive: true, force: true });
      }
    },
  },
  'request-cost': {
    label: 'request-cost (CPU per API request and per watch event, in the bench process)',
    bench: async () => {
      const r = await benchRequestCost(ctx(), REQUEST_COST_REQUESTS);
      summaries.push({ title: 'request-cost (CPU ms, one request in flight)', rows: requestCostRows(r) });
      return { date: new Date().toISOString(), command: out.command, machine: out.machine, ...r };
    },
  },
};
try {
  for (const name of BENCHMARKS) {
    if (!opts.only.includes(name)) continue;
    say(`${run[name].label} ...`);
    out[name] = await run[name].bench();
    say(JSON.stringify(out[name]));
  }
} finally {
  (out.machine as Record<string, unknown>).loadAvg1mAfter = r1(loadavg()[0]!);
  await cluster?.stop();
}

// Re-read: the file may have changed during the run (only this run's keys are replaced).
if (existsSync(opts.results)) {
  try {
    all = JSON.parse(readFileSync(opts.results, 'utf8'));
  } catch {
    say(`${opts.results} was not JSON; starting it anew`);
    all = {};
  }
}
// warm-pool-scale --quick is a development run and a scaled one (--pods, --namespaces) another:
// their numbers go under their own keys (warmPoolScaleKey). The run's date/machine describe the
// other benchmarks' entries; warm-pool-scale and agent-sandbox carry their own.
const onlySelfDescribed = opts.only.every((b) => SELF_DESCRIBED.includes(b));
for (const [key, entry] of Object.entries(out)) {
  if (onlySelfDescribed && !(BENCHMARKS as readonly string[]).includes(key)) continue;
  all = mergeResults(all, 'controller', resultKey(key), entry);
}
writeFileSync(opts.results, `${JSON.stringify(all, null, 2)}\n`);
say(`results merged into ${opts.results} (key \`controller\`)`);
for (const { title, rows } of summaries) sayTargets(say, title, rows);
if (!opts.controllerOnly) {
  say('webhook latency benchmark ...');
  execFileSync(
    process.execPath,
    ['--conditions=@claimkit/source', join(repoRoot, 'packages/webhook/bench/latency.ts')],
    { stdio: 'inherit' },
  );
}
