// How the local provider knows its components are up: health endpoints over HTTP(S), the fake nodes
// Ready and untainted, the service account controller at work; and a component that exits during
// startup fails the wait at once, with the end of its log.
import { request } from 'node:https';
import type { Clients } from './kube.ts';
import type { RunPorts } from './local-run.ts';
import { type Started, tail } from './procs.ts';
import { waitFor } from './wait.ts';

/** Each wait's deadline, and the signal that ends the polling of a start that failed. */
export interface Wait {
  timeoutMs: number;
  signal: AbortSignal;
}

export interface Tls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** GET over HTTPS with our CA (or none: components' self-signed health endpoints). */
export function httpsGet(url: string, tls?: Tls): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', timeout: 5_000, ...(tls ?? { rejectUnauthorized: false }), agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

export async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** Rejects as soon as a started component exits (it should run until stopped). */
export function dies(s: Started): Promise<never> {
  return s.exited.then(({ code, signal }) => {
    throw new Error(
      `${s.rec.name} exited (code ${code}, signal ${signal}) during startup; last log lines of ${s.logPath}:\n${tail(s.logPath)}`,
    );
  });
}

/** Races any promise against the exit of the given components. */
export function guardedBy(components: Started[]): <T>(p: Promise<T>) => Promise<T> {
  const running = components.map((s) => {
    const p = dies(s);
    p.catch(() => {}); // also handled when no guard is waiting (e.g. exits at stop())
    return p;
  });
  return <T>(p: Promise<T>) => Promise.race([p, ...running]);
}

/**
 * The controller-manager and the scheduler are healthy, `nodeCount` fake nodes are Ready and
 * untainted, and the service account controller has made the `default` account (pods need it).
 */
export async function untilReady(
  admin: Clients,
  ports: RunPorts,
  nodeCount: number,
  wait: Wait,
): Promise<void> {
  const poll = { timeoutMs: wait.timeoutMs, intervalMs: 250, signal: wait.signal };
  await Promise.all([
    waitFor(
      'kube-controller-manager /healthz',
      () => httpsGet(`https://127.0.0.1:${ports.controllerManager}/healthz`).then((r) => r.status === 200),
      poll,
    ),
    waitFor(
      'kube-scheduler /healthz',
      () => httpsGet(`https://127.0.0.1:${ports.scheduler}/healthz`).then((r) => r.status === 200),
      poll,
    ),
    waitFor(
      `${nodeCount} fake nodes Ready and untainted`,
      async () => {
        const list = await admin.core.listNode({ labelSelector: 'type=kwok' });
        const ready = list.items.filter(
          (n) =>
            n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
            !n.spec?.taints?.length,
        );
        return ready.length >= nodeCount;
      },
      poll,
    ),
    waitFor(
      'the default service account',
      () => admin.core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }),
      poll,
    ),
  ]);
}
