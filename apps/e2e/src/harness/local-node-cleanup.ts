// Undoing a real node (local-node.ts) after its processes are gone: what a kubelet and containerd
// leave outside their own processes. Containers outlive containerd and the kubelet on purpose (their
// shims are not in the components' process groups, so a kubelet or containerd restart keeps the
// pods running); the run's end must therefore kill them itself, then unmount what the kubelet and
// containerd mounted under the run directory (volumes, rootfs, network namespaces) and remove the
// bridge and the iptables chains. Used by stop(), the watchdog, `cluster down` and the next start.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The run's real node keeps its state here; its presence marks a run that had one. */
export const nodeStateDir = (stateDir: string): string => join(stateDir, 'node');
/** The cgroup parent of the node's pods (kubelet cgroupRoot), in every v1 hierarchy. */
export const NODE_CGROUP_ROOT = 'claimkit-node';
/** The CNI bridge of the real node. */
export const NODE_BRIDGE = 'claimkit0';
const CGROUP_BASE = '/sys/fs/cgroup';

/**
 * One real node per machine: its kube-proxy owns the KUBE-* iptables chains and its kubelet the
 * cgroup root, so a second run would undo the first. The lock file names the run that has it; a
 * run whose state directory is gone, has no pid file, or whose owner and processes are all dead (a
 * run killed with everything it started) no longer holds it.
 */
const NODE_LOCK = '/run/claimkit-real-node.lock';

/**
 * Whether the run in stateDir is still alive: its pid file's owner or one of its processes runs.
 * (Read here, not through procs.ts, which imports this file.)
 */
function runAlive(stateDir: string): boolean {
  let pids: { owner?: unknown; procs?: { pid?: unknown }[] };
  try {
    pids = JSON.parse(readFileSync(join(stateDir, 'pids.json'), 'utf8'));
  } catch {
    return false;
  }
  const running = (pid: unknown) => {
    if (typeof pid !== 'number') return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  return running(pids.owner) || (pids.procs ?? []).some((p) => running(p.pid));
}

/** Takes the machine's real node for the run in stateDir; otherwise says which run has it. */
export function acquireNodeLock(stateDir: string, lockPath = NODE_LOCK): string | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockPath, stateDir, { flag: 'wx' });
      return undefined;
    } catch {
      let holder = '';
      try {
        holder = readFileSync(lockPath, 'utf8').trim();
      } catch {
        continue; // released meanwhile
      }
      if (holder === stateDir) return undefined;
      if (holder && runAlive(holder)) {
        return `another run has this machine's real node (${holder}; \`pnpm cluster down\` stops a background one)`;
      }
      rmSync(lockPath, { force: true }); // stale: its run is gone
    }
  }
  return `cannot take ${lockPath}`;
}

function releaseNodeLock(stateDir: string): void {
  try {
    if (readFileSync(NODE_LOCK, 'utf8').trim() === stateDir) rmSync(NODE_LOCK, { force: true });
  } catch {
    // not held
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quiet(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/** Every pid in the node's pod cgroups (all hierarchies, recursively). */
function podPids(): number[] {
  const pids = new Set<number>();
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    try {
      for (const l of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (l) pids.add(Number(l));
    } catch {
      // not a cgroup directory
    }
    for (const e of entries) if (!e.includes('.')) walk(join(dir, e));
  };
  let hierarchies: string[] = [];
  try {
    hierarchies = readdirSync(CGROUP_BASE);
  } catch {
    return [];
  }
  for (const h of hierarchies) walk(join(CGROUP_BASE, h, NODE_CGROUP_ROOT));
  walk(join(CGROUP_BASE, 'unified', NODE_CGROUP_ROOT));
  return [...pids];
}

/** Pids whose executable lives in the node's binary directory (containerd's shims). */
function shimPids(binDir: string | undefined): number[] {
  if (!binDir) return [];
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv0 = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')[0] ?? '';
      if (argv0.startsWith(`${binDir}/containerd-shim`)) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

function kill(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** Mount points at or under dir, deepest first. */
function mountsUnder(dir: string): string[] {
  let text = '';
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const points = text
    .split('\n')
    .map((l) => (l.split(' ')[4] ?? '').replace(/\\040/g, ' '))
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

function removeEmptyCgroups(): void {
  const rm = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const e of entries) if (!e.includes('.')) rm(join(dir, e));
    try {
      rmdirSync(dir);
    } catch {
      // busy or not ours
    }
  };
  let hierarchies: string[] = [];
  try {
    hierarchies = readdirSync(CGROUP_BASE);
  } catch {
    return;
  }
  for (const h of hierarchies) rm(join(CGROUP_BASE, h, NODE_CGROUP_ROOT));
}

/**
 * Removes the iptables chains and rules kube-proxy and the CNI plugins made (KUBE-*, CNI-*): the
 * tables are saved, those lines dropped and the rest restored in one transaction.
 */
function flushNodeIptables(): void {
  const saved = quiet('iptables-save', []);
  if (!/(CNI-|KUBE-)/.test(saved)) return;
  const ours = /(^:(CNI-|KUBE-))|(^-A (CNI-|KUBE-))|( -[jg] (CNI-|KUBE-))/;
  const kept = saved
    .split('\n')
    .filter((l) => !ours.test(l))
    .join('\n');
  try {
    execFileSync('iptables-restore', [], { input: kept, stdio: ['pipe', 'ignore', 'ignore'] });
  } catch {
    // best effort: a leftover chain is harmless to the next run (kube-proxy resyncs its own)
  }
}

/**
 * Kills the node's containers and shims, unmounts everything under the node's state directory and
 * removes its bridge and iptables chains. Idempotent; the components themselves must be gone.
 */
export async function cleanupRealNode(stateDir: string, binDir?: string): Promise<void> {
  const dir = nodeStateDir(stateDir);
  if (!existsSync(dir)) return;
  for (let round = 0; round < 20; round++) {
    const pids = [...podPids(), ...shimPids(binDir)];
    if (pids.length === 0) break;
    kill(pids);
    await sleep(100);
  }
  for (const m of mountsUnder(dir)) quiet('umount', ['-l', m]);
  removeEmptyCgroups();
  quiet('ip', ['link', 'del', NODE_BRIDGE]);
  flushNodeIptables();
  releaseNodeLock(stateDir);
}
