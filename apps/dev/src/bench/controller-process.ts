// What the benchmarks that run the controller as shipped (its own process) share: the image's V8
// flags, a free loopback port for its metrics, and its resident memory.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { repoRoot } from '@claimkit/e2e/harness';
import { inCgroupArgv, type MemoryCgroup } from './memory-cgroup.ts';

/** The Node flags of the controller image's ENTRYPOINT (packages/controller/Dockerfile), read from it. */
export function imageNodeFlags(dockerfile: string): string[] {
  const line = dockerfile.split('\n').find((l) => l.startsWith('ENTRYPOINT '));
  const argv = line ? (JSON.parse(line.slice('ENTRYPOINT '.length)) as string[]) : [];
  if (argv[0] !== 'node') throw new Error('packages/controller/Dockerfile: ENTRYPOINT is not ["node", ...]');
  return argv.slice(1).filter((a) => a.startsWith('--'));
}

/** V8 flags the controller runs with in the benches: the image's, or CK_NODE_FLAGS (experiments). */
export const CONTROLLER_NODE_FLAGS =
  process.env.CK_NODE_FLAGS !== undefined
    ? process.env.CK_NODE_FLAGS.split(' ').filter(Boolean)
    : imageNodeFlags(readFileSync(join(repoRoot, 'packages/controller/Dockerfile'), 'utf8'));

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** VmRSS of a process in MB (Linux /proc). */
export const rssMb = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
};

/**
 * The controller as shipped (dist/main.js with its image's Node flags) in its own process, watching
 * one namespace (or all without one), /metrics and /healthz on 127.0.0.1:`port`, warnings on stderr.
 */
export function spawnShippedController(o: {
  kubeconfig: string;
  /** Watch this namespace only; all namespaces when undefined (the flag takes one or all). */
  namespace: string | undefined;
  port: number;
  /** More Node flags (e.g. --cpu-prof). */
  nodeFlags?: string[];
  /** More controller flags. */
  args?: string[];
  /** Run it inside this memory cgroup (memory-cgroup.ts), as under a container's memory limit. */
  cgroup?: MemoryCgroup;
}): ChildProcess {
  const argv = [
    ...CONTROLLER_NODE_FLAGS,
    ...(o.nodeFlags ?? []),
    join(repoRoot, 'packages/controller/dist/main.js'),
    '--kubeconfig',
    o.kubeconfig,
    ...(o.namespace === undefined ? [] : ['--namespace', o.namespace]),
    ...(o.args ?? []),
    '--metrics-addr',
    `127.0.0.1:${o.port}`,
    '--health-addr',
    `127.0.0.1:${o.port}`,
    '--log-level',
    'warn',
  ];
  const [exe, args] = o.cgroup
    ? inCgroupArgv(o.cgroup.procsFile, process.execPath, argv)
    : [process.execPath, argv];
  return spawn(exe, args, { stdio: ['ignore', 'ignore', 'inherit'] });
}
