// `pnpm bench`'s arguments: one options table (core's) from which the parsing, the defaults, --help
// and the usage errors come; the benchmarks to run as arguments. Pure, so it is unit-tested.
import { join, resolve } from 'node:path';
import { CONTROLLER_DEFAULTS } from '@claimkit/controller';
import { defineOptions, type OptionValues, type Startup, startup, UsageError } from '@claimkit/core/options';
import { AGENT_SANDBOX_PUBLISHED } from './agent-sandbox.ts';
import { parseMemorySize } from './memory-cgroup.ts';
import { WARM_POOL_SCALE_FULL, WARM_POOL_SCALE_QUICK } from './warm-pool-scale/options.ts';

export const BENCHMARKS = [
  'takeover',
  'finalize',
  'binds',
  'rss',
  'warm-pool-scale',
  'agent-sandbox',
  'capacity',
  'pool-reconcile',
  'request-cost',
  'warm-start',
] as const;
export type Benchmark = (typeof BENCHMARKS)[number];
/**
 * warm-pool-scale, agent-sandbox and capacity run only when named (each takes a quarter of an hour
 * or more), and warm-start (it needs the real node).
 */
export const DEFAULT_BENCHMARKS: Benchmark[] = [
  'takeover',
  'finalize',
  'binds',
  'rss',
  'pool-reconcile',
  'request-cost',
];
/** Benchmarks whose entries carry their own date, command and machine. */
export const SELF_DESCRIBED: readonly Benchmark[] = [
  'warm-pool-scale',
  'agent-sandbox',
  'capacity',
  'pool-reconcile',
  'request-cost',
  'warm-start',
];
/** Benchmarks that run on the real node (local-node.ts): the control plane is started with it. */
export const ON_REAL_NODE: readonly Benchmark[] = ['warm-start'];
/** Benchmarks that run in process, without a control plane. */
export const IN_PROCESS: readonly Benchmark[] = ['pool-reconcile'];

/** The problem with a list of benchmark names, if any. */
function benchmarksProblem(names: readonly string[]): string | undefined {
  const unknown = names.find((n) => !(BENCHMARKS as readonly string[]).includes(n));
  if (unknown !== undefined)
    return `unknown benchmark ${JSON.stringify(unknown)} (want one of ${BENCHMARKS.join(', ')})`;
  return names.length === 0 ? 'want at least one benchmark' : undefined;
}

const Q = WARM_POOL_SCALE_QUICK;
const F = WARM_POOL_SCALE_FULL;
export const BENCH_OPTIONS = defineOptions({
  only: {
    type: 'list',
    default: DEFAULT_BENCHMARKS,
    validate: benchmarksProblem,
    help: 'the controller benchmarks to run, comma-separated (warm-pool-scale, agent-sandbox and warm-start only when named)',
  },
  'controller-only': { type: 'bool', help: "skip the webhook's latency benchmark" },
  trials: { type: 'int', min: 1, default: 25, help: 'takeover trials' },
  binds: { type: 'int', min: 1, default: 500, help: 'claims bound from a warm pool' },
  rss: { type: 'int', min: 1, default: 10_000, help: 'claims and pods the RSS run caches' },
  concurrency: {
    type: 'int',
    min: 1,
    // The shipped default (DESIGN: the benches run the shipped defaults).
    default: CONTROLLER_DEFAULTS.concurrency,
    help: "the controller's workers (binds, warm-pool-scale, agent-sandbox; the shipped number unless given)",
  },
  results: {
    type: 'string',
    arg: 'FILE',
    default: 'bench/results.json',
    defaultText: 'bench/results.json in the repository',
    help: "the file the controller's results are merged into",
  },
  quick: {
    type: 'bool',
    help: `warm-pool-scale at a tenth of its scale (${Q.warm} pods, ${Q.steady} + ${Q.burst} claims) instead of agent-sandbox's (${F.warm} pods, ${F.steady} claims at ${F.rate}/s + ${F.burst} at once), stored under warm-pool-scale-quick`,
  },
  pods: {
    type: 'int',
    min: 1,
    defaultText: "the preset's",
    help: "warm-pool-scale: N warm pods instead of the preset's (same claims, same rate); stored under warm-pool-scale-<N>x<M> and compared with the stored preset run",
  },
  namespaces: {
    type: 'int',
    min: 1,
    arg: 'M',
    default: 1,
    help: 'warm-pool-scale: the pods over M PodPools, one per namespace (with more than one the controller watches all namespaces). The 37,000-pod run: pnpm bench warm-pool-scale --pods 37000 --namespaces 13',
  },
  restores: {
    type: 'int',
    min: 1,
    default: 21,
    help: 'warm-start: claims served by an on-demand restore (the first pulls the image, the others give the percentiles)',
  },
  seconds: {
    type: 'int',
    min: 1,
    arg: 'S',
    default: 60,
    help: `agent-sandbox: the steady phase's length in seconds, at ${AGENT_SANDBOX_PUBLISHED.rate} claims/s; capacity: each load's (at most; shortened so every claim gets a warm pod)`,
  },
  refill: {
    type: 'bool',
    help: 'capacity: pools keep a warm buffer of 113 pods each and make the rest on demand (claims wait for new pods), stored under capacity-refill',
  },
  seed: { type: 'int', default: 1, help: "agent-sandbox, capacity: the Poisson arrivals' seed" },
  'cpu-prof': {
    type: 'string',
    arg: 'DIR',
    help: "warm-pool-scale, agent-sandbox: profile the controller's steady phase (V8, through its inspector) into DIR and summarise it in the results",
  },
  'memory-limit': {
    type: 'string',
    arg: 'SIZE',
    validate: (s: string) =>
      parseMemorySize(s) === undefined
        ? `want a size such as 512Mi or 1Gi, got ${JSON.stringify(s)}`
        : undefined,
    help: "warm-pool-scale, agent-sandbox: run the controller in a memory cgroup of SIZE (e.g. 512Mi, the chart's limit; needs root), stored under <key>-mem<N>Mi",
  },
  shards: {
    type: 'int',
    min: 1,
    default: 1,
    help: 'warm-pool-scale, agent-sandbox: run N controller processes, shard i with --shard i/N, stored under <key>-shards<N>',
  },
  'controller-arg': {
    type: 'list',
    repeatable: true,
    arg: 'ARG',
    help: 'warm-pool-scale, agent-sandbox: pass ARG to the controller (e.g. --controller-arg=--disable-claim-events)',
  },
});

const BENCH_HELP = {
  usage: `usage: pnpm bench [BENCHMARK...] [flags]

Controller benchmarks on a local control plane started for the run, or on a running cluster with
CLAIMKIT_BENCH_KUBECONFIG=<kubeconfig> (e.g. \`pnpm cluster up\`'s), merged into the results file
under \`controller\`; then the webhook's latency benchmark.
BENCHMARK: run these (comma-separated or as arguments) instead of --only's, and alone (no webhook
benchmark after them); each one of
  ${BENCHMARKS.slice(0, 6).join('|')}
  ${BENCHMARKS.slice(6).join('|')}

flags:`,
};

export interface Options {
  only: Benchmark[];
  controllerOnly: boolean;
  trials: number;
  binds: number;
  rss: number;
  concurrency: number;
  results: string;
  quick: boolean;
  pods?: number;
  namespaces: number;
  seconds: number;
  seed: number;
  controllerArgs: string[];
  cpuProfDir?: string;
  /** warm-pool-scale and agent-sandbox: the controller's memory limit in bytes (a cgroup). */
  memoryLimitBytes?: number;
  /** warm-pool-scale and agent-sandbox: controller processes, sharded by pool (--shard i/N). */
  shards: number;
  /** warm-start: claims served by an on-demand restore (the first pulls the image). */
  restores: number;
  /** capacity: pools with a small warm buffer that make the rest of their pods on demand. */
  refill: boolean;
}

type Values = OptionValues<typeof BENCH_OPTIONS>;

const checks = (v: Values) => [
  v.shards > 1 && v['memory-limit'] !== undefined
    ? '--memory-limit runs one controller in one cgroup: not with --shards'
    : undefined,
];

/** The benchmarks named as arguments (each may be a comma-separated list). */
function namedBenchmarks(positionals: readonly string[]): Benchmark[] {
  const names = positionals.flatMap((p) => p.split(',').filter((s) => s !== ''));
  const problem = positionals.length > 0 ? benchmarksProblem(names) : undefined;
  if (problem !== undefined) throw new UsageError(problem);
  return names as Benchmark[];
}

function optionsFrom(v: Values, given: Set<string>, positionals: string[], root: string): Options {
  const named = namedBenchmarks(positionals);
  const only = named.length > 0 ? named : (v.only as Benchmark[]);
  // warm-start's control plane is started with the real node, whose kubelet and runtime would share
  // the cores the other benchmarks measure.
  if (only.some((b) => ON_REAL_NODE.includes(b)) && only.some((b) => !ON_REAL_NODE.includes(b)))
    throw new UsageError(`${ON_REAL_NODE.join(', ')} runs alone (it needs the real node)`);
  const memoryLimit = v['memory-limit'];
  return {
    only,
    // Benchmarks named as arguments run alone (no webhook benchmark after them).
    controllerOnly: v['controller-only'] || named.length > 0,
    trials: v.trials,
    binds: v.binds,
    rss: v.rss,
    concurrency: v.concurrency,
    // A path given is the caller's; the default is the repository's file.
    results: given.has('results') ? resolve(v.results) : join(root, v.results),
    quick: v.quick,
    ...(v.pods !== undefined ? { pods: v.pods } : {}),
    namespaces: v.namespaces,
    seconds: v.seconds,
    seed: v.seed,
    controllerArgs: v['controller-arg'],
    ...(v['cpu-prof'] !== undefined ? { cpuProfDir: resolve(v['cpu-prof']) } : {}),
    ...(memoryLimit !== undefined ? { memoryLimitBytes: parseMemorySize(memoryLimit)! } : {}),
    shards: v.shards,
    restores: v.restores,
    refill: v.refill,
  };
}

/** `pnpm bench`'s start-up decision: its help, one usage-error line, or the options (root: the repository). */
export function benchStartup(argv: readonly string[], root: string): Startup<Options> {
  return startup(
    'pnpm bench',
    BENCH_OPTIONS,
    BENCH_HELP,
    argv,
    {},
    (v, given, positionals) => optionsFrom(v, given, positionals, root),
    { positionals: true, checks },
  );
}
