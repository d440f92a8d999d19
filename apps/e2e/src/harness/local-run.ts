// One run of the local provider: its state directory (certificates, kubeconfigs, logs, etcd data),
// its loopback ports, the control-plane processes it starts and the pid file that records them, and
// how it ends. stop() kills the processes and removes the directory; until then this process's exit
// and signals kill them too, and (unless persistent) a detached watchdog does if it is SIGKILLed.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from './ports.ts';
import {
  endRun,
  PID_FILE,
  type PidFile,
  type ProcRecord,
  readPidFile,
  type Started,
  signalAll,
  startProc,
  tail,
  writePidFile,
} from './procs.ts';

export interface RunPorts {
  etcd: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
  scheduler: number;
  kwok: number;
}

export interface Run {
  binDir: string;
  stateDir: string;
  ports: RunPorts;
  /** The API server's URL. */
  server: string;
  kubeconfigPath: string;
  userKubeconfigPath: string;
  /**
   * Starts a control-plane binary of binDir in its own process group and records it in the pid
   * file, with the URL that answers 200 when it is healthy. `exe` overrides the executable (the real
   * node's binaries live in a directory of their own).
   */
  start(name: string, args: string[], health?: string, exe?: string): Started;
  /** The last `lines` log lines of every component started, headed by its log file. */
  logTails(lines: number): string[];
  /** A persistent cluster, once up, outlives this process: no more exit and signal hooks. */
  detach(): void;
  /** Kills the processes (newest first) and removes the state directory (or only the pid file). */
  stop(): Promise<void>;
}

function startWatchdog(stateDir: string): void {
  // A detached helper that outlives us: if this process dies without stopping the cluster (a
  // SIGKILLed test runner), it kills the recorded process groups and removes the state dir.
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'watchdog.ts'), String(process.pid), stateDir],
    {
      detached: true,
      stdio: 'ignore',
    },
  );
  child.unref();
}

export async function createRun(
  binDir: string,
  base: string,
  o: { persistent: boolean; keepState: boolean },
): Promise<Run> {
  const stateDir = mkdtempSync(join(base, o.persistent ? 'up-' : 'run-'));
  const logDir = join(stateDir, 'logs');
  mkdirSync(logDir);
  const [etcd, etcdPeer, apiserver, controllerManager, scheduler, kwok] = (await freePorts(6)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const server = `https://127.0.0.1:${apiserver}`;
  const kubeconfigPath = join(stateDir, 'admin.kubeconfig');
  const userKubeconfigPath = join(stateDir, 'user.kubeconfig');
  const procs: ProcRecord[] = [];
  const pidFile: PidFile = {
    owner: process.pid,
    persistent: o.persistent,
    createdAt: new Date().toISOString(),
    stateDir,
    kubeconfigPath,
    userKubeconfigPath,
    server,
    procs,
  };
  writePidFile(stateDir, pidFile);

  // The pid file, not `procs`, is the truth once the run is up: a component restarted by another
  // process (a test file, `pnpm cluster restart`) has a new pid there only.
  const current = () => readPidFile(stateDir)?.procs ?? procs;
  const onExit = () => signalAll(current());
  const onSignal = (sig: NodeJS.Signals) => {
    signalAll(current());
    // Nobody else handles this signal: restore the default behaviour (terminate).
    if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  // A persistent cluster (`cluster up`) outlives this process once it is up, but not a start that
  // is interrupted half-way: the hooks stay until the start detaches them.
  if (!o.persistent) startWatchdog(stateDir);
  process.on('exit', onExit);
  for (const s of signals) process.once(s, onSignal);
  const detach = () => {
    process.off('exit', onExit);
    for (const s of signals) process.off(s, onSignal);
  };

  let stopped: Promise<void> | undefined;
  return {
    binDir,
    stateDir,
    ports: { etcd, etcdPeer, apiserver, controllerManager, scheduler, kwok },
    server,
    kubeconfigPath,
    userKubeconfigPath,
    start(name, args, health, exe) {
      const s = startProc(name, exe ?? join(binDir, name), args, logDir, stateDir, health);
      procs.push(s.rec);
      writePidFile(stateDir, pidFile);
      return s;
    },
    logTails(lines) {
      return procs.map((p) => {
        const path = join(logDir, `${p.name}.log`);
        return `--- ${p.name} (${path}):\n${tail(path, lines)}`;
      });
    },
    detach,
    stop() {
      stopped ??= (async () => {
        await endRun(stateDir, current());
        detach();
        if (o.keepState) rmSync(join(stateDir, PID_FILE), { force: true });
        else rmSync(stateDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
