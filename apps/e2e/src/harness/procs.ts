// Child processes of a local cluster: each runs in its own process group (detached), is recorded
// in the run's pid file, and is killed by group. Works across processes: `cluster down`, the
// watchdog and the next start only need the pid file.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { cleanupRealNode } from './local-node-cleanup.ts';

export interface ProcRecord {
  name: string;
  pid: number;
  /** Absolute path of the executable: a pid is only killed while /proc/<pid>/cmdline still names it. */
  exe: string;
  /** The arguments it was started with, so that another process can start it again (local-control.ts). */
  args?: string[];
  /** Where it answers 200 when healthy (self-signed HTTPS is not verified). */
  health?: string;
}

export interface PidFile {
  /** The process that owns the run; when it is gone (and not `persistent`) the run is garbage. */
  owner: number;
  persistent: boolean;
  createdAt: string;
  stateDir: string;
  kubeconfigPath: string;
  userKubeconfigPath: string;
  server: string;
  procs: ProcRecord[];
}

export const PID_FILE = 'pids.json';

export function readPidFile(stateDir: string): PidFile | undefined {
  try {
    return JSON.parse(readFileSync(join(stateDir, PID_FILE), 'utf8')) as PidFile;
  } catch {
    return undefined;
  }
}

export function writePidFile(stateDir: string, data: PidFile): void {
  const tmp = join(stateDir, `${PID_FILE}.tmp`);
  writeFileSync(tmp, JSON.stringify(data, null, 2));
  // rename is atomic: readers never see a half-written file.
  renameSync(tmp, join(stateDir, PID_FILE));
}

/**
 * Replaces the record of the component `rec.name` (a restart) in place: the order of the records is
 * the start order, which stop relies on. Read-modify-write of the atomic file; restarts are rare.
 */
export function updatePidRecord(stateDir: string, rec: ProcRecord): void {
  const pf = readPidFile(stateDir);
  if (!pf) throw new Error(`no run in ${stateDir} (no ${PID_FILE})`);
  const i = pf.procs.findIndex((p) => p.name === rec.name);
  if (i < 0) throw new Error(`run ${stateDir} has no component ${rec.name}`);
  pf.procs[i] = rec;
  writePidFile(stateDir, pf);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when pid is alive and (on Linux) still runs `exe` — guards against recycled pids. */
export function isOurs(rec: ProcRecord): boolean {
  if (!isAlive(rec.pid)) return false;
  const procPath = `/proc/${rec.pid}/cmdline`;
  if (!existsSync('/proc/self')) return true;
  try {
    const argv0 = readFileSync(procPath, 'utf8').split('\0')[0] ?? '';
    return argv0 === rec.exe;
  } catch {
    return false;
  }
}

/**
 * The process of `rec` has finished exiting: gone, a zombie, or its pid now runs something else.
 * Not the same as !isOurs: the kernel releases a dying process's memory (its cmdline then reads
 * empty) before it closes its files, so a component restarted at that moment found its own
 * listening port still taken ("bind: address already in use" on etcd's peer port).
 */
export function hasExited(rec: ProcRecord): boolean {
  if (!existsSync('/proc/self')) return !isAlive(rec.pid);
  try {
    const stat = readFileSync(`/proc/${rec.pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return true;
    const argv0 = readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return argv0 !== '' && argv0 !== rec.exe;
  } catch {
    return true;
  }
}

export function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** Synchronous best effort (usable from an 'exit' handler): SIGTERM every recorded group. */
export function signalAll(procs: ProcRecord[], sig: NodeJS.Signals = 'SIGTERM'): void {
  for (const p of [...procs].reverse()) if (isOurs(p)) signalGroup(p.pid, sig);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Stops processes one by one in reverse start order (kwok, scheduler, controller-manager, then the
 * API server, then etcd: an API server whose etcd is already gone hangs in its graceful shutdown):
 * SIGTERM, up to graceMs for the group to exit, then SIGKILL.
 */
export async function killAll(procs: ProcRecord[], graceMs = 5_000): Promise<void> {
  for (const p of [...procs].reverse()) {
    if (!isOurs(p)) continue;
    signalGroup(p.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (!hasExited(p) && Date.now() < deadline) await sleep(25);
    if (isOurs(p)) signalGroup(p.pid, 'SIGKILL');
    const hard = Date.now() + 5_000;
    while (!hasExited(p) && Date.now() < hard) await sleep(25);
  }
}

/**
 * Ends a run's processes (killAll) and then what a real node leaves behind them: its containers,
 * mounts, bridge and iptables chains (local-node-cleanup.ts; nothing when the run had no node).
 */
export async function endRun(stateDir: string, procs: ProcRecord[], graceMs = 5_000): Promise<void> {
  await killAll(procs, graceMs);
  const containerd = procs.find((p) => p.name === 'containerd');
  await cleanupRealNode(stateDir, containerd ? dirname(containerd.exe) : undefined);
}

export interface Started {
  rec: ProcRecord;
  child: ChildProcess;
  /** Resolves with the exit code/signal when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  logPath: string;
}

/** Starts exe in its own process group with stdout+stderr appended to <logDir>/<name>.log. */
export function startProc(
  name: string,
  exe: string,
  args: string[],
  logDir: string,
  cwd: string,
  health?: string,
): Started {
  const logPath = join(logDir, `${name}.log`);
  const fd = openSync(logPath, 'a');
  const child = spawn(exe, args, {
    cwd,
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, HOME: cwd },
  });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error(`cannot start ${name} (${exe})`);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.once('exit', (code, signal) => res({ code, signal }));
    child.once('error', () => res({ code: -1, signal: null }));
  });
  return { rec: { name, pid: child.pid, exe, args, ...(health ? { health } : {}) }, child, exited, logPath };
}

export function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * Cleans up runs left behind: owner gone (crashed test run) or, with `all`, every run including
 * persistent ones (`cluster down`). Returns the state dirs that were cleaned.
 */
export async function reapRuns(
  dir: string,
  opts: { all?: boolean; except?: string; only?: string } = {},
): Promise<string[]> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const cleaned: string[] = [];
  for (const n of names) {
    // Only local runs (run-*, up-*) have processes and pid files; kind-*/kubeconfig-* are not ours.
    if (!/^(run|up)-/.test(n)) continue;
    const stateDir = join(dir, n);
    if (stateDir === opts.except || (opts.only !== undefined && stateDir !== opts.only)) continue;
    const pf = readPidFile(stateDir);
    if (!pf && !opts.all && ageMs(stateDir) < 5 * 60_000) continue; // a run still being set up
    const orphan = !pf || (pf.persistent ? !pf.procs.some(isOurs) : !isAlive(pf.owner));
    if (!opts.all && !orphan) continue;
    await endRun(stateDir, pf?.procs ?? [], 5_000);
    rmSync(stateDir, { recursive: true, force: true });
    cleaned.push(stateDir);
  }
  return cleaned;
}
