// Process time of claimctl: `claimctl --help` (target < 300 ms) and `claimctl get podclaims`
// against a small cluster (20 claims). Each sample is one fresh `node` process, wall clock from
// spawn to exit. Results are merged into bench/results.json under the key `cli`.
//
//   node --conditions=@claimkit/source packages/cli/bench/startup.ts [--kubeconfig PATH] [--runs 30]
//
// Without --kubeconfig (or $KUBECONFIG) it starts the local development cluster with
// `pnpm cluster up` (apps/dev/src/cluster-cli.ts) and reuses it if one is already running.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { API_VERSION, isApiError } from '@claimkit/core';
import { createKubeClient, loadKubeConfig } from '@claimkit/kube';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = fileURLToPath(new URL('../', import.meta.url));
const RESULTS = `${ROOT}bench/results.json`;
const NS = 'claimctl-bench';
const CLAIMS = 20;
const TARGET_HELP_MS = 300;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const RUNS = Number(arg('runs') ?? '30');

function kubeconfigPath(): string {
  const given = arg('kubeconfig') ?? process.env.KUBECONFIG;
  if (given) return given;
  const out = execFileSync(
    process.execPath,
    ['--conditions=@claimkit/source', 'apps/dev/src/cluster-cli.ts', 'up'],
    {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const m = out.match(/KUBECONFIG=(\S+)/);
  if (!m) throw new Error(`cluster up printed no KUBECONFIG:\n${out}`);
  return m[1]!.replace(/^["']|["']$/g, '');
}

async function ensure(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!isApiError(e, 'AlreadyExists')) throw e;
  }
}

async function seed(kubeconfig: string): Promise<void> {
  const kc = loadKubeConfig({ kubeconfig });
  const { CoreV1Api } = await import('@kubernetes/client-node');
  try {
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  } catch (e) {
    if ((e as { code?: number }).code !== 409) throw e;
  }
  const client = createKubeClient(kc);
  for (let i = 0; i < CLAIMS; i++) {
    await ensure(() =>
      client.create({
        apiVersion: API_VERSION,
        kind: 'PodClaim',
        metadata: { name: `bench-${String(i).padStart(2, '0')}`, namespace: NS },
        spec: { poolName: 'web' },
      }),
    );
  }
}

interface Stats {
  runs: number;
  minMs: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
  /** CPU time (user + system) of the child, from /proc/self/stat cutime+cstime (10 ms ticks). */
  cpuP50Ms?: number;
}

/** User + system CPU of waited-for children so far, in ms (Linux only). */
function childrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

function sample(args: string[], runs: number): Stats {
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const c0 = childrenCpuMs();
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    const dt = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    const c1 = childrenCpuMs();
    if (i < 2) continue; // two warm-up runs (file cache, V8 compile cache)
    ms.push(dt);
    if (c0 !== undefined && c1 !== undefined) cpu.push(c1 - c0);
  }
  ms.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const q = (p: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]! * 10) / 10;
  const stats: Stats = { runs, minMs: q(0), p50Ms: q(0.5), p90Ms: q(0.9), maxMs: q(1) };
  if (cpu.length > 0) stats.cpuP50Ms = cpu[Math.floor(cpu.length / 2)]!;
  return stats;
}

execFileSync('pnpm', ['run', 'build'], { cwd: CLI, stdio: 'ignore' });
const kubeconfig = kubeconfigPath();
await seed(kubeconfig);
const load0 = loadavg()[0]!;
const main = `${CLI}dist/main.js`;
const help = sample([main, '--help'], RUNS);
const helpSource = sample(
  ['--conditions=@claimkit/source', `${CLI}src/main.ts`, '--help'],
  Math.ceil(RUNS / 3),
);
const get = sample([main, 'get', 'podclaims', '-n', NS, '--kubeconfig', kubeconfig], RUNS);
const nodeBaseline = sample(['-e', '0'], RUNS);
const result = {
  date: new Date().toISOString(),
  command: 'node --conditions=@claimkit/source packages/cli/bench/startup.ts',
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model.split(' ').slice(0, 2).join(' '),
    node: process.version,
    loadAvg1mBefore: Math.round(load0 * 100) / 100,
    loadAvg1mAfter: Math.round(loadavg()[0]! * 100) / 100,
  },
  method:
    'wall clock of one fresh process per sample (spawn to exit), 2 warm-up runs dropped; cpuP50Ms is the child user+system CPU (less sensitive to machine load); built package (dist/main.js) unless noted; get podclaims lists 20 claims from the local control plane over TLS',
  targetHelpMs: TARGET_HELP_MS,
  nodeBaseline,
  help,
  helpFromSource: helpSource,
  getPodclaims: { claims: CLAIMS, ...get },
  helpUnderTarget: help.p50Ms < TARGET_HELP_MS,
};
const all = existsSync(RESULTS) ? JSON.parse(readFileSync(RESULTS, 'utf8')) : {};
all.cli = result;
writeFileSync(RESULTS, `${JSON.stringify(all, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
