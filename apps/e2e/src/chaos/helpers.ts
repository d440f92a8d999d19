// Shared by the chaos suites: the controller as a child process run from source (so it can be
// SIGKILLed), a churn of claims against a warm pool, and the end-of-scenario check (converged,
// every invariant, doctor clean) with its convergence time.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  ANNOTATION_MIGRATE,
  getOrUndefined,
  isApiError,
  type PodClaim,
  type PodClaimSet,
  type PodPool,
} from '@claimkit/core';
import { runDoctor } from '@claimkit/core/doctor';
import { expectAllInvariants, kube, until } from '../controller/helpers.ts';
import { testPool } from '../harness/objects.ts';
import { repoRoot } from '../harness/paths.ts';
import { freePort } from '../harness/ports.ts';

export interface ControllerProcess {
  child: ChildProcess;
  /** http://127.0.0.1:port of its /healthz and /readyz. */
  health: string;
  /** Its stderr+stdout so far (for failure messages). */
  output(): string;
  /** Sends SIGKILL (or sig) and waits for the exit. */
  kill(sig?: NodeJS.Signals): Promise<void>;
}

const running = new Set<ControllerProcess>();

/** Starts claimkit-controller from source for one namespace; resolves once /readyz answers 200. */
export async function spawnController(
  ns: string,
  opts: { kubeconfig: string; identity: string; args?: string[] },
): Promise<ControllerProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--conditions=@claimkit/source',
      join(repoRoot, 'packages/controller/src/main.ts'),
      `--kubeconfig=${opts.kubeconfig}`,
      `--namespace=${ns}`,
      `--identity=${opts.identity}`,
      `--health-addr=127.0.0.1:${port}`,
      '--metrics-addr=0',
      '--sweep-interval=2s',
      '--log-level=warn',
      ...(opts.args ?? []),
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const proc: ControllerProcess = {
    child,
    health: `http://127.0.0.1:${port}`,
    output: () => out,
    async kill(sig = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
      await exited;
      running.delete(proc);
    },
  };
  running.add(proc);
  await until(
    `controller ${opts.identity} ready`,
    async () => {
      if (child.exitCode !== null) throw new Error(`controller exited (${child.exitCode}):\n${out}`);
      return (await readyz(proc)) === 200;
    },
    60_000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}\n${out}`);
  });
  return proc;
}

/** Stops every controller process this file started (afterAll). */
export async function killControllers(): Promise<void> {
  await Promise.all([...running].map((p) => p.kill('SIGTERM')));
}

/** The status code of the controller's /readyz (0: no answer). */
export async function readyz(p: ControllerProcess): Promise<number> {
  try {
    const res = await fetch(`${p.health}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

export function warmPool(ns: string, minIdle = 2): PodPool {
  return testPool(ns, 'warm', { minIdle, maxPods: 40 });
}

export interface ChurnOptions {
  /** At most this many churned claims at a time (default 6). */
  live?: number;
  periodMs?: number;
  /** Also a PodClaimSet `churn-set` on the pool, scaled 0..3 every few rounds. */
  claimSet?: boolean;
  /** Also a migration requested (annotation) on a churned claim every few rounds. */
  migrate?: boolean;
}

/**
 * Claims created and deleted against the pool until stop(): at most `live` at a time, plus what
 * `claimSet` and `migrate` add. Writes that fail (the API server is down) are retried by the next
 * round; the churn never throws.
 */
const churning = new Set<{ stop(): Promise<void> }>();

/**
 * Stops every churn this file started (afterAll, before finalizeClaims): a test that failed midway
 * leaves its churn running, and claims created during the teardown would keep the namespace.
 */
export async function stopChurns(): Promise<void> {
  await Promise.all([...churning].map((l) => l.stop()));
}

export function churn(ns: string, o: ChurnOptions = {}) {
  const c = kube();
  const live = o.live ?? 6;
  let n = 0;
  let stopped = false;
  let rounds = 0;
  let setCreated = false;
  const names: string[] = [];
  const setKey = { namespace: ns, name: 'churn-set' };
  const extras = async (round: number) => {
    if (o.claimSet && round % 5 === 0) {
      const replicas = (round / 5) % 4;
      if (!setCreated) {
        const set: PodClaimSet = {
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaimSet',
          metadata: setKey,
          spec: {
            replicas,
            selector: { matchLabels: { 'claimkit.dev/claim-set': 'churn-set' } },
            template: {
              metadata: { labels: { 'claimkit.dev/claim-set': 'churn-set' } },
              spec: { poolName: 'warm' },
            },
          },
        };
        await c.create(set).catch((e: unknown) => {
          // created by an earlier attempt whose answer was lost
          if (!isApiError(e, 'AlreadyExists')) throw e;
        });
        setCreated = true;
      } else {
        await c.patch('PodClaimSet', setKey, { spec: { replicas } });
      }
    }
    if (o.migrate && round % 7 === 3 && names.length > 0) {
      const name = names[names.length - 1]!;
      await getOrUndefined(
        c.patch(
          'PodClaim',
          { namespace: ns, name },
          { metadata: { annotations: { [ANNOTATION_MIGRATE]: `churn-${round}` } } },
        ),
      );
    }
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        if (names.length >= live) {
          const name = names.shift()!;
          await getOrUndefined(c.delete('PodClaim', { namespace: ns, name }));
        }
        const name = `churn-${n++}`;
        const claim: PodClaim = {
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaim',
          metadata: { name, namespace: ns },
          spec: { poolName: 'warm' },
        };
        await c.create(claim);
        names.push(name);
        rounds++;
        await extras(rounds);
      } catch {
        // the fault of the scenario; try again next round
      }
      await new Promise((r) => setTimeout(r, o.periodMs ?? 150));
    }
  })();
  const handle = {
    get rounds() {
      return rounds;
    },
    async stop() {
      stopped = true;
      await loop;
      churning.delete(handle);
    },
  };
  churning.add(handle);
  return handle;
}

/** Every claim of the namespace Bound (or gone), every invariant, doctor with no finding. */
export async function expectConverged(ns: string, what: string, since: number, timeoutMs = 60_000) {
  const c = kube();
  await until(
    `${what}: every PodClaim in ${ns} Bound`,
    async () =>
      (await c.list('PodClaim', { namespace: ns })).items.every(
        (cl) => cl.metadata.deletionTimestamp || cl.status?.phase === 'Bound',
      ),
    timeoutMs,
    async () => {
      const waiting = (await c.list('PodClaim', { namespace: ns })).items.filter(
        (cl) => !cl.metadata.deletionTimestamp && cl.status?.phase !== 'Bound',
      );
      const pools = (await c.list('PodPool', { namespace: ns })).items.map(
        (p) => `${p.metadata.name} ${JSON.stringify(p.status ?? {})} (maxPods ${p.spec.maxPods})`,
      );
      return `not Bound: ${waiting.map((cl) => `${cl.metadata.name} (pool ${cl.spec.poolName}) ${cl.status?.phase ?? 'no phase'}: ${cl.status?.conditions?.map((x) => `${x.type}=${x.status} ${x.reason ?? ''} ${x.message ?? ''}`).join('; ') ?? ''}`).join(' | ')}; pools: ${pools.join(' | ')}`;
    },
  );
  await expectAllInvariants(ns, timeoutMs);
  const doctor = await runDoctor(c, { namespace: ns, now: () => Date.now() });
  if (doctor.findings.length > 0)
    throw new Error(`${what}: doctor found ${JSON.stringify(doctor.findings, null, 2)}`);
  const ms = Date.now() - since;
  process.stderr.write(`[chaos] ${what}: converged ${(ms / 1000).toFixed(1)}s after the fault ended\n`);
  return ms;
}
