// `pnpm bench`'s arguments (pure, so they are unit-tested): which benchmarks, their sizes and flags.
import { resolve } from 'node:path';
import { CONTROLLER_DEFAULTS } from '@claimkit/controller';
import { parseMemorySize } from './memory-cgroup.ts';

export const BENCHMARKS = [
  'takeover',
  'finalize',
  'binds',
  'rss',
  'warm-pool-scale',
  'agent-sandbox',
  'pool-reconcile',
  'request-cost',
  'warm-start',
] as const;
export type Benchmark = (typeof BENCHMARKS)[number];
/**
 * warm-pool-scale and agent-sandbox run only when named (each takes a quarter of an hour or more),
 * and warm-start (it needs the real node).
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
  'pool-reconcile',
  'request-cost',
  'warm-start',
];
/** Benchmarks that run on the real node (local-node.ts): the control plane is started with it. */
export const ON_REAL_NODE: readonly Benchmark[] = ['warm-start'];
/** Benchmarks that run in process, without a control plane. */
export const IN_PROCESS: readonly Benchmark[] = ['pool-reconcile'];

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
}

export class UsageError extends Error {}

/** `pnpm bench`'s arguments; `results` is the default results file. */
export function parseArgs(argv: string[], results: string): Options {
  const o: Options = {
    only: [...DEFAULT_BENCHMARKS],
    controllerOnly: false,
    quick: false,
    namespaces: 1,
    shards: 1,
    seconds: 60,
    seed: 1,
    controllerArgs: [],
    trials: 25,
    restores: 21,
    binds: 500,
    rss: 10_000,
    // The shipped default (DESIGN: the benches run the shipped defaults).
    concurrency: CONTROLLER_DEFAULTS.concurrency,
    results,
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
    const arg = argv[i]!;
    // --flag=value as well as --flag value (a controller flag as the value reads better with =).
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
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
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (flag === '--only') o.only = benchmarks(flag, value);
    else if (flag === '--pods') o.pods = count(flag, value);
    else if (flag === '--namespaces') o.namespaces = count(flag, value);
    else if (flag === '--shards') o.shards = count(flag, value);
    else if (flag === '--seconds') o.seconds = count(flag, value);
    else if (flag === '--seed') o.seed = Number.isInteger(Number(value)) ? Number(value) : count(flag, value);
    else if (flag === '--controller-arg') o.controllerArgs.push(value);
    else if (flag === '--cpu-prof') o.cpuProfDir = resolve(value);
    else if (flag === '--memory-limit') {
      const bytes = parseMemorySize(value);
      if (bytes === undefined)
        throw new UsageError(`${flag} takes a size such as 512Mi or 1Gi (got ${value})`);
      o.memoryLimitBytes = bytes;
    } else if (flag === '--trials') o.trials = count(flag, value);
    else if (flag === '--binds') o.binds = count(flag, value);
    else if (flag === '--restores') o.restores = count(flag, value);
    else if (flag === '--rss') o.rss = count(flag, value);
    else if (flag === '--concurrency') o.concurrency = count(flag, value);
    else if (flag === '--results') o.results = resolve(value);
    else throw new UsageError(`unknown flag ${JSON.stringify(flag)}`);
  }
  if (o.shards > 1 && o.memoryLimitBytes !== undefined)
    throw new UsageError('--memory-limit runs one controller in one cgroup: not with --shards');
  if (positional.length > 0) o.only = positional;
  // Benchmarks named as arguments run alone (no webhook benchmark after them).
  if (positional.length > 0) o.controllerOnly = true;
  return o;
}
