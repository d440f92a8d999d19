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
import { benchTakeover } from './takeover.ts';

const BENCHMARKS = ['takeover', 'finalize', 'binds', 'rss'] as const;
type Benchmark = (typeof BENCHMARKS)[number];

const USAGE = `usage: pnpm bench [--only ${BENCHMARKS.join(',')}] [--controller-only]
                  [--trials 25] [--binds 500] [--rss 10000] [--concurrency 8] [--results FILE]

Controller benchmarks on a local control plane started for the run, or on a running cluster with
CLAIMKIT_BENCH_KUBECONFIG=<kubeconfig> (e.g. \`pnpm cluster up\`'s), merged into the results file
under \`controller\`; then the webhook's latency benchmark.
  --only LIST         the controller benchmarks to run, comma-separated (default: all)
  --controller-only   skip the webhook's latency benchmark
  --trials N          takeover trials
  --binds N           claims bound from a warm pool
  --rss N             claims and pods the RSS run caches
  --concurrency N     the controller's workers in the binds run
  --results FILE      where the controller's results are merged (default bench/results.json)`;

interface Options {
  only: Benchmark[];
  controllerOnly: boolean;
  trials: number;
  binds: number;
  rss: number;
  concurrency: number;
  results: string;
}

class UsageError extends Error {}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    only: [...BENCHMARKS],
    controllerOnly: false,
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
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--controller-only') {
      o.controllerOnly = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (flag === '--only') {
      const names = value.split(',').filter((s) => s !== '');
      const unknown = names.find((n) => !(BENCHMARKS as readonly string[]).includes(n));
      if (unknown !== undefined || names.length === 0)
        throw new UsageError(`--only takes ${BENCHMARKS.join(', ')} (got ${JSON.stringify(value)})`);
      o.only = names as Benchmark[];
    } else if (flag === '--trials') o.trials = count(flag, value);
    else if (flag === '--binds') o.binds = count(flag, value);
    else if (flag === '--rss') o.rss = count(flag, value);
    else if (flag === '--concurrency') o.concurrency = count(flag, value);
    else if (flag === '--results') o.results = resolve(value);
    else throw new UsageError(`unknown flag ${JSON.stringify(flag)}`);
  }
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
  say('starting the local control plane ...');
  cluster = await startLocalCluster({ log: (m) => say(m) });
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
all.controller = { ...((all.controller as object) ?? {}), ...out };
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
