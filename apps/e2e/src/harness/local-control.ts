// Faults on a running local cluster, from any process that knows its state directory (a test file,
// `pnpm cluster restart`): stop, SIGKILL, start and restart one component, and report each one's
// state. The pid file is the truth: a restart replaces the component's record there, so `cluster
// status`, `cluster down`, the watchdog and the owner's stop() all see the new process.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { BINARIES, NODE_BINARIES } from './binaries.ts';
import { dies, httpOk, httpsGet } from './local-readiness.ts';
import {
  hasExited,
  isOurs,
  type ProcRecord,
  readPidFile,
  type Started,
  signalGroup,
  startProc,
  updatePidRecord,
} from './procs.ts';
import { waitFor } from './wait.ts';

/** The components of a local run, in start order: the control plane's, then the real node's. */
export const COMPONENTS = [...BINARIES, ...NODE_BINARIES] as const;
export type ComponentName = (typeof COMPONENTS)[number];

export function isComponentName(s: string): s is ComponentName {
  return (COMPONENTS as readonly string[]).includes(s);
}

export interface ComponentState {
  name: string;
  pid: number;
  running: boolean;
  /** Its health URL answered 200 (undefined: not running, or no health URL recorded). */
  healthy: boolean | undefined;
}

function record(stateDir: string, name: ComponentName): ProcRecord {
  const pf = readPidFile(stateDir);
  if (!pf) throw new Error(`no local run in ${stateDir} (no pid file)`);
  const rec = pf.procs.find((p) => p.name === name);
  if (!rec) throw new Error(`the run in ${stateDir} has no ${name}`);
  return rec;
}

/** One probe of a health URL: 200 within 5 s. */
export async function probeHealth(url: string): Promise<boolean> {
  if (url.startsWith('http:')) return httpOk(url);
  try {
    return (await httpsGet(url)).status === 200;
  } catch {
    return false;
  }
}

/** Every component: its recorded pid, whether that process still runs, whether it is healthy. */
export async function componentStates(stateDir: string): Promise<ComponentState[]> {
  const pf = readPidFile(stateDir);
  if (!pf) return [];
  return Promise.all(
    pf.procs.map(async (p) => {
      const running = isOurs(p);
      return {
        name: p.name,
        pid: p.pid,
        running,
        healthy: running && p.health ? await probeHealth(p.health) : undefined,
      };
    }),
  );
}

/**
 * Stops a component: SIGTERM (up to graceMs, then SIGKILL) or, with `kill`, SIGKILL at once; resolves
 * once its process is gone. Its record stays in the pid file, so it can be started again.
 */
export async function stopComponent(
  stateDir: string,
  name: ComponentName,
  opts: { kill?: boolean; graceMs?: number } = {},
): Promise<void> {
  const rec = record(stateDir, name);
  if (!isOurs(rec)) return;
  signalGroup(rec.pid, opts.kill ? 'SIGKILL' : 'SIGTERM');
  try {
    await waitFor(`${name} (pid ${rec.pid}) to exit`, () => hasExited(rec), {
      timeoutMs: opts.graceMs ?? 10_000,
      intervalMs: 25,
    });
  } catch {
    signalGroup(rec.pid, 'SIGKILL');
    await waitFor(`${name} (pid ${rec.pid}) to exit after SIGKILL`, () => hasExited(rec), {
      timeoutMs: 5_000,
      intervalMs: 25,
    });
  }
}

/**
 * Starts a stopped component again with the executable and arguments it was first started with
 * (its data, ports and certificates are the run's), records the new pid and waits until it is
 * healthy; a component that exits meanwhile fails the wait with the end of its log.
 */
export async function startComponent(
  stateDir: string,
  name: ComponentName,
  opts: { timeoutMs?: number } = {},
): Promise<ProcRecord> {
  const rec = record(stateDir, name);
  if (isOurs(rec)) throw new Error(`${name} is already running (pid ${rec.pid})`);
  if (!rec.args) throw new Error(`${name} was started without its arguments recorded; cannot restart it`);
  const args = rec.args;
  // A port of the component taken meanwhile ("address already in use") is retried a few times,
  // naming who holds it: a component restarted on its port must not fail a whole run on a race.
  for (let attempt = 1; ; attempt++) {
    const started: Started = startProc(name, rec.exe, args, join(stateDir, 'logs'), stateDir, rec.health);
    updatePidRecord(stateDir, started.rec);
    const exited = dies(started);
    exited.catch(() => {}); // also handled when it dies after the wait
    try {
      if (rec.health) {
        const health = rec.health;
        await Promise.race([
          exited,
          waitFor(`${name} healthy (${health})`, () => probeHealth(health), {
            timeoutMs: opts.timeoutMs ?? 60_000,
            intervalMs: 100,
          }),
        ]);
      }
      return started.rec;
    } catch (e) {
      const port = /listen tcp [\d.]*:(\d+): bind: address already in use/.exec(String(e))?.[1];
      if (!port || attempt >= 4) throw e;
      process.stderr.write(
        `[e2e:local] ${name}: port ${port} taken on restart (attempt ${attempt}), held by: ${portHolders(Number(port))}; retrying\n`,
      );
      await new Promise((r) => setTimeout(r, 1_000 * attempt));
    }
  }
}

/** Who holds a TCP port (ss), for the message of a component whose port was taken. */
function portHolders(port: number): string {
  try {
    const out = execFileSync('ss', ['-tanpH', `sport = :${port}`], {
      encoding: 'utf8',
      timeout: 5_000,
    }).trim();
    return out ? out.replace(/\s+/g, ' ') : 'nobody any more';
  } catch {
    return 'unknown (no ss)';
  }
}

/** stopComponent then startComponent; resolves when the new process is healthy. */
export async function restartComponent(
  stateDir: string,
  name: ComponentName,
  opts: { kill?: boolean; timeoutMs?: number } = {},
): Promise<ProcRecord> {
  await stopComponent(stateDir, name, opts.kill ? { kill: true } : {});
  return startComponent(stateDir, name, opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {});
}

/** Every recorded component runs and answers its health URL (within timeoutMs). */
export async function untilAllHealthy(stateDir: string, timeoutMs = 60_000): Promise<void> {
  let last: ComponentState[] = [];
  await waitFor(
    `every component of ${stateDir} healthy`,
    async () => {
      last = await componentStates(stateDir);
      return last.length > 0 && last.every((c) => c.running && c.healthy !== false);
    },
    { timeoutMs, intervalMs: 200 },
  ).catch((e: Error) => {
    const bad = last.filter((c) => !(c.running && c.healthy !== false));
    throw new Error(
      `${e.message}; not healthy: ${bad.map((c) => `${c.name} (${c.running ? 'unhealthy' : 'dead'})`).join(', ')}`,
    );
  });
}
