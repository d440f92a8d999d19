// A fault-injecting HTTPS proxy in front of an API server, for chaos tests: a client (the
// controller) is pointed at it through a kubeconfig of its own, and a seeded share of its requests
// is answered 429 (with Retry-After), 500 or 503, has its connection reset before or after the API
// server handled it, or is held past the client's timeout (and then sent on: the write lands after
// the client gave up); watches are cut mid-stream. Everything else is passed through unchanged.
// The proxy terminates TLS (its own self-signed loopback certificate) and talks to the API server
// with the upstream kubeconfig's credentials, so the client needs none.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createServer as createHttpsServer,
  Agent as HttpsAgent,
  request as httpsRequest,
  type RequestOptions,
} from 'node:https';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { loopbackServingCert } from './pki.ts';

/** What the proxy does to one request. */
export type Fault =
  | 'throttle' // 429 with Retry-After: 1 (the API server's priority-and-fairness answer)
  | 'error' // 500 (no Retry-After: the client cannot know whether it was processed)
  | 'unavailable' // 503 without Retry-After
  | 'reset' // the connection is closed without an answer; the request is never sent on
  | 'lost-response' // sent on and processed; the connection is closed instead of answering
  | 'delay'; // held for delayMs (past the client's timeout), then sent on

export const FAULTS: readonly Fault[] = [
  'throttle',
  'error',
  'unavailable',
  'reset',
  'lost-response',
  'delay',
];

export interface FaultPlan {
  /** Seeds every random choice: the same seed and request order give the same faults. */
  seed: number;
  /** Share of requests (watches included) answered with a fault, 0..1. */
  rate: number;
  /** The faults drawn from, uniformly. Default all of FAULTS. */
  faults?: readonly Fault[];
  /** How long a delayed request is held: more than the client's timeout. */
  delayMs: number;
  /** Share of the watches passed through that are cut mid-stream, 0..1. */
  watchCutRate: number;
  /** A cut watch is cut after a uniform time in this range (ms) of streaming. */
  watchCutAfterMs: [number, number];
}

/** The decision for one request: a fault, or pass it on (a watch maybe cut after cutAfterMs). */
export type Decision = { fault: Fault } | { fault: 'none'; cutAfterMs?: number };

/** mulberry32: a small seeded PRNG, uniform in [0,1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The proxy's decisions, one per request in arrival order (pure apart from the seeded PRNG it
 * owns): every request draws the same number of random values, so the n-th decision depends only
 * on the seed and n.
 */
export function faultDecider(plan: FaultPlan): (req: { watch: boolean }) => Decision {
  const random = seededRandom(plan.seed);
  const faults = plan.faults ?? FAULTS;
  if (faults.length === 0) throw new Error('FaultPlan.faults: empty');
  const [cutMin, cutMax] = plan.watchCutAfterMs;
  return (req) => {
    const [roll, pick, cutRoll, cutAt] = [random(), random(), random(), random()];
    if (roll < plan.rate) return { fault: faults[Math.floor(pick * faults.length)]! };
    if (req.watch && cutRoll < plan.watchCutRate)
      return { fault: 'none', cutAfterMs: Math.round(cutMin + (cutMax - cutMin) * cutAt) };
    return { fault: 'none' };
  };
}

export type FaultCounts = Record<Fault | 'passed' | 'watchCuts', number>;

export interface FaultProxy {
  /** https://127.0.0.1:port */
  readonly url: string;
  /** A kubeconfig pointing at the proxy (trusting its certificate; no credentials needed). */
  readonly kubeconfigPath: string;
  /** What was done so far, by fault ('passed': requests sent on without a fault). */
  readonly counts: FaultCounts;
  /**
   * Faults on (the plan) or off: everything passed through, planned watch cuts cancelled; requests
   * already delayed are still sent on when their delay is over.
   */
  setFaults(on: boolean): void;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** The API server's kubeconfig (current context): where requests go, with whose credentials. */
  upstreamKubeconfig: string;
  /** Where the proxy's certificate and kubeconfig are written. */
  dir: string;
  plan: FaultPlan;
  /** Start with faults on (default true). */
  faults?: boolean;
}

const isWatch = (url: string) => /[?&]watch=(true|1)(&|$)/.test(url);

function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });
}

export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  mkdirSync(opts.dir, { recursive: true });
  const kc = new KubeConfig();
  kc.loadFromFile(opts.upstreamKubeconfig);
  const upstream = new URL(kc.getCurrentCluster()!.server);
  const tls: RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const agent = new HttpsAgent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
  const authHeaders = (tls.headers ?? {}) as Record<string, string>;

  const decide = faultDecider(opts.plan);
  let faultsOn = opts.faults ?? true;
  const counts: FaultCounts = {
    passed: 0,
    watchCuts: 0,
    ...Object.fromEntries(FAULTS.map((f) => [f, 0])),
  } as FaultCounts;
  const sockets = new Set<Socket>();
  // Delayed requests (sent on when their delay is over, faults on or off) and planned watch cuts
  // (cancelled when the faults are turned off).
  const delays = new Set<ReturnType<typeof setTimeout>>();
  const cuts = new Set<ReturnType<typeof setTimeout>>();
  const later = (timers: typeof delays, ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  /** Sends the request on; `onResponse` decides what reaches the client. */
  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    onResponse: (up: IncomingMessage) => void,
    onError: () => void,
  ) => {
    const headers = { ...req.headers, ...authHeaders, host: upstream.host };
    const up = httpsRequest(
      {
        agent,
        host: upstream.hostname,
        port: upstream.port || 443,
        method: req.method,
        path: req.url,
        headers,
        servername: tls.servername,
      },
      onResponse,
    );
    up.on('error', onError);
    // The client gave up (its timeout) while we wait for the API server: drop the upstream request
    // too, as a proxy would. (A delayed request is sent on after that: it was already closed.)
    res.once('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    up.end(body);
  };

  const pass = (req: IncomingMessage, res: ServerResponse, body: Buffer, cutAfterMs?: number) => {
    forward(
      req,
      res,
      body,
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        if (cutAfterMs !== undefined)
          later(cuts, cutAfterMs, () => {
            if (res.writableEnded) return;
            counts.watchCuts++;
            up.destroy();
            req.socket.destroy();
          });
      },
      () => req.socket.destroy(),
    );
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const watch = isWatch(req.url ?? '');
    const d: Decision = faultsOn ? decide({ watch }) : { fault: 'none' };
    if (d.fault === 'none') {
      counts.passed++;
      pass(req, res, body, d.cutAfterMs);
      return;
    }
    counts[d.fault]++;
    const answer = (code: number, reason: string, extra: Record<string, string> = {}) => {
      res.writeHead(code, { 'content-type': 'application/json', ...extra });
      res.end(statusBody(code, reason, `fault-proxy: ${d.fault}`));
    };
    switch (d.fault) {
      case 'throttle':
        return answer(429, 'TooManyRequests', { 'retry-after': '1' });
      case 'error':
        return answer(500, 'InternalError');
      case 'unavailable':
        return answer(503, 'ServiceUnavailable');
      case 'reset':
        req.socket.destroy();
        return;
      case 'lost-response':
        forward(
          req,
          res,
          body,
          (up) => {
            // Processed upstream; the answer is lost on the way back.
            up.resume();
            up.once('end', () => req.socket.destroy());
          },
          () => req.socket.destroy(),
        );
        return;
      case 'delay':
        // Held past the client's timeout, then sent on anyway (the request is processed late).
        later(delays, opts.plan.delayMs, () => {
          // A watch whose client gave up is nobody's (sent on, it would stream for minutes).
          if (watch && req.socket.destroyed) return;
          forward(
            req,
            res,
            body,
            (up) => {
              up.resume();
              if (res.destroyed || req.socket.destroyed) return;
              res.writeHead(up.statusCode ?? 502, up.headers);
              up.pipe(res);
            },
            () => req.socket.destroy(),
          );
        });
        return;
    }
  };

  const cert = loopbackServingCert(opts.dir);
  const server = createHttpsServer(
    { cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => handle(req, res, Buffer.concat(chunks)));
      req.on('error', () => req.socket.destroy());
    },
  );
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.on('clientError', (_e, s) => s.destroy());
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      if (typeof a === 'object' && a) resolve(a.port);
      else reject(new Error('fault-proxy: no port'));
    });
  });
  const url = `https://127.0.0.1:${port}`;
  const kubeconfigPath = join(opts.dir, 'kubeconfig');
  writeFileSync(
    kubeconfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: fault-proxy',
      '  cluster:',
      `    server: ${url}`,
      `    certificate-authority-data: ${readFileSync(cert.certFile).toString('base64')}`,
      'users:',
      '- name: fault-proxy',
      '  user: {}',
      'contexts:',
      '- name: fault-proxy',
      '  context: {cluster: fault-proxy, user: fault-proxy}',
      'current-context: fault-proxy',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );

  return {
    url,
    kubeconfigPath,
    counts,
    setFaults(on) {
      faultsOn = on;
      if (on) return;
      for (const t of cuts) clearTimeout(t);
      cuts.clear();
    },
    async close() {
      for (const t of [...delays, ...cuts]) clearTimeout(t);
      delays.clear();
      cuts.clear();
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      agent.destroy();
      await closed;
    },
  };
}
