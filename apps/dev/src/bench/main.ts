// `pnpm bench`: controller benchmarks on the local control plane (the e2e harness), side by side in
// one run, merged into bench/results.json under `controller` (the `webhook` key is kept); then the
// webhook's latency benchmark (packages/webhook/bench/latency.ts) unless --controller-only.
// Not timed tests: numbers are measured and recorded, targets are reported beside them.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { makeClients, repoRoot, startLocalCluster } from '@claimkit/e2e/harness';
import { benchBinds } from './binds.ts';
import { benchContext, r1 } from './context.ts';
import { benchFinalize } from './finalize.ts';
import { benchRss } from './rss.ts';
import { mergeResults } from './stats.ts';
import { benchTakeover } from './takeover.ts';
import {
  benchWarmPoolScale,
  WARM_POOL_SCALE_FULL,
  WARM_POOL_SCALE_QUICK,
  warmPoolMaxPods,
} from './warm-pool-scale.ts';

const BENCHMARKS = ['takeover', 'finalize', 'binds', 'rss', 'warm-pool-scale'] as const;
type Benchmark = (typeof BENCHMARKS)[number];
/** Run only when named (it takes about a quarter of an hour at full scale). */
const DEFAULT_BENCHMARKS: Benchmark[] = ['takeover', 'finalize', 'binds', 'rss'];
/** Pods one kwok node takes (controlplane/kwok-stages/node-initialize.yaml). */
const PODS_PER_NODE = 500;

const USAGE = `usage: pnpm bench [BENCHMARK...] [--only ${BENCHMARKS.join(',')}] [--controller-only]
                  [--trials 25] [--binds 500] [--rss 10000] [--concurrency 8] [--results FILE]
                  [--quick] [--cpu-prof DIR]

Controller benchmarks on a local control plane started for the run, or on a running cluster with
CLAIMKIT_BENCH_KUBECONFIG=<kubeconfig> (e.g. \`pnpm cluster up\`'s), merged into the results file
under \`controller\`; then the webhook's latency benchmark.
  BENCHMARK, --only LIST
                      the controller benchmarks to run, comma-separated or as arguments (default:
                      ${DEFAULT_BENCHMARKS.join(', ')}; warm-pool-scale only when named)
  --controller-only   skip the webhook's latency benchmark
  --trials N          takeover trials
  --binds N           claims bound from a warm pool
  --rss N             claims and pods the RSS run caches
  --concurrency N     the controller's workers in the binds run
  --results FILE      where the controller's results are merged (default bench/results.json)
  --quick             warm-pool-scale at a tenth of its scale (${WARM_POOL_SCALE_QUICK.warm} pods, ${WARM_POOL_SCALE_QUICK.steady} + ${WARM_POOL_SCALE_QUICK.burst} claims)
                      instead of agent-sandbox's (${WARM_POOL_SCALE_FULL.warm} pods, ${WARM_POOL_SCALE_FULL.steady} claims at ${WARM_POOL_SCALE_FULL.rate}/s + ${WARM_POOL_SCALE_FULL.burst} at once)
  --cpu-prof DIR      warm-pool-scale: write the controller's V8 CPU profile into DIR`;

interface Options {
  only: Benchmark[];
  controllerOnly: boolean;
  trials: number;
  binds: number;
  rss: number;
  concurrency: number;
  results: string;
  quick: boolean;
  cpuProfDir?: string;
}

class UsageError extends Error {}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    only: [...DEFAULT_BENCHMARKS],
    controllerOnly: false,
    quick: false,
    trials: 25,
    binds: 500,
    rss: 10_000,
    concurrency: 8,
    results: join(repoRoot, 'bench/results.json'),
  };
  const count = (flag: string, v: string | undefined) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} needs a positive integer (got ${v})`);
    return n;
  };
  const benchmarks = (flag: string, value: string) => {
    const names = value.split(',').filter((s) => s !== '');
    const unknown = names.find((n) => !(BENCHMARKS as readonly string[]).includes(n));
    if (unknown !== undefined || names.length === 0)
      throw new UsageError(`${flag} takes ${BENCHMARKS.join(', ')} (got ${JSON.stringify(value)})`);
    return names as Benchmark[];
  };
  const positional: Benchmark[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--controller-only') {
      o.controllerOnly = true;
      continue;
    }
    if (flag === '--quick') {
      o.quick = true;
      continue;
    }
    if (!flag.startsWith('-')) {
      positional.push(...benchmarks('a benchmark argument', flag));
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (flag === '--only') o.only = benchmarks(flag, value);
    else if (flag === '--cpu-prof') o.cpuProfDir = resolve(value);
    else if (flag === '--trials') o.trials = count(flag, value);
    else if (flag === '--binds') o.binds = count(flag, value);
    else if (flag === '--rss') o.rss = count(flag, value);
    else if (flag === '--concurrency') o.concurrency = count(flag, value);
    else if (flag === '--results') o.results = resolve(value);
    else throw new UsageError(`unknown flag ${JSON.stringify(flag)}`);
  }
  if (positional.length > 0) o.only = positional;
  // Benchmarks named as arguments run alone (no webhook benchmark after them).
  if (positional.length > 0) o.controllerOnly = true;
  return o;
}

const say = (s: string) => process.stderr.write(`[bench] ${s}\n`);
const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
let opts: Options;
try {
  opts = parseArgs(argv);
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  console.error(`${e.message}\n\n${USAGE}`);
  process.exit(2);
}

const given = process.env.CLAIMKIT_BENCH_KUBECONFIG;
let cluster: { kubeconfigPath: string; stop(): Promise<void> };
if (given) cluster = { kubeconfigPath: given, stop: async () => {} };
else {
  // Enough kwok nodes for the warm pool (kwok nodes take ${PODS_PER_NODE} pods each), and at least 2.
  const scale = opts.quick ? WARM_POOL_SCALE_QUICK : WARM_POOL_SCALE_FULL;
  const pods = opts.only.includes('warm-pool-scale') ? warmPoolMaxPods(scale) : 0;
  const nodes = Math.max(2, Math.ceil((pods * 1.2) / PODS_PER_NODE));
  say(`starting the local control plane (${nodes} kwok nodes) ...`);
  // kwok nodes only: a real node's kubelet and runtime would share the cores the figures measure.
  cluster = await startLocalCluster({ log: (m) => say(m), nodes, realNode: false });
}
const ctx = benchContext(cluster.kubeconfigPath, makeClients(cluster.kubeconfigPath), say);

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
const run: Record<Benchmark, { label: string; bench: () => Promise<unknown> }> = {
  takeover: { label: 'takeover latency', bench: () => benchTakeover(ctx, opts.trials) },
  finalize: { label: 'finalize latency', bench: () => benchFinalize(ctx) },
  binds: { label: 'binds/s', bench: () => benchBinds(ctx, opts.binds, opts.concurrency) },
  rss: { label: 'RSS', bench: () => benchRss(ctx, opts.rss) },
  'warm-pool-scale': {
    label: `warm-pool-scale${opts.quick ? ' (quick)' : ''}`,
    bench: async () => ({
      date: new Date().toISOString(),
      command: out.command,
      machine: out.machine,
      quick: opts.quick,
      ...(await benchWarmPoolScale(ctx, {
        ...(opts.quick ? WARM_POOL_SCALE_QUICK : WARM_POOL_SCALE_FULL),
        concurrency: opts.concurrency,
        rawWrites: 2000,
        // warm-pool-scale runs last; a local cluster is stopped right after it.
        cleanup: Boolean(given),
        ...(opts.cpuProfDir ? { cpuProfDir: opts.cpuProfDir } : {}),
      })),
    }),
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
  await cluster.stop();
}

let all: Record<string, unknown> = {};
if (existsSync(opts.results)) {
  try {
    all = JSON.parse(readFileSync(opts.results, 'utf8'));
  } catch {
    say(`${opts.results} was not JSON; starting it anew`);
  }
}
// warm-pool-scale --quick is a development run: its numbers go under their own key.
// The run's date/machine describe the other benchmarks' entries; warm-pool-scale carries its own.
const onlyWarmPool = opts.only.every((b) => b === 'warm-pool-scale');
for (const [key, entry] of Object.entries(out)) {
  if (onlyWarmPool && !(BENCHMARKS as readonly string[]).includes(key)) continue;
  all = mergeResults(
    all,
    'controller',
    key === 'warm-pool-scale' && opts.quick ? 'warm-pool-scale-quick' : key,
    entry,
  );
}
writeFileSync(opts.results, `${JSON.stringify(all, null, 2)}\n`);
say(`results merged into ${opts.results} (key \`controller\`)`);
if (!opts.controllerOnly) {
  say('webhook latency benchmark ...');
  execFileSync(
    process.execPath,
    ['--conditions=@claimkit/source', join(repoRoot, 'packages/webhook/bench/latency.ts')],
    { stdio: 'inherit' },
  );
}
