// Latency and throughput of /validate/pods and /validate/captures over TLS on loopback, on Node and on
// Deno, beside a no-op Hono handler on the same server in the same run.
//
//   node --conditions=@claimkit/source packages/webhook/bench/latency.ts [--rate 1000] [--count 5000] [--runtimes node,deno]
//
// Open loop: request i is due at t0 + i/rate whatever happened before (the generator never waits for
// a response, so there is no coordinated omission). Latency is counted from when the request was sent;
// how late the generator itself sent it (its timer granularity) is reported apart, as `sendLateP99Ms`.
// The load generator sleeps between sends: spinning would take a whole core of a 2-core machine and
// leave the server sharing the other with its GC and compiler threads (that is what the ~100 ms p99
// stalls of earlier runs were). The load generator runs in this process, each server in its own process. Results are merged into bench/results.json under the key `webhook`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { PodState } from '@claimkit/core';
import {
  capture,
  captureClaim,
  captureStatus,
  claimedBy,
  ownedBy,
  podClaim,
  podPool,
  withState,
  withUid,
} from '@claimkit/core/testing';
import { poolPod, reviewFor } from '../src/testing/review.ts';
import { denoBinary, makeCert, type Started, startProcess, WEBHOOK_DIR } from '../src/testing/serve-tls.ts';
import { benchApp } from './bench-app.ts';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : dflt;
}
const RATE = Number(arg('rate', '1000'));
const COUNT = Number(arg('count', '5000'));
// 10 s per endpoint: V8 tiers up the hot path in a batch about 10 s (~10k requests) into the load,
// and on 2 cores that batch of compiler threads starves both processes for ~100 ms once. It is a
// start-up cost, not the steady state the target is about, so it belongs to the warm-up (whose own
// p99 is still reported as `warmupP99Ms`).
const WARMUP = Number(arg('warmup', '30000'));
const RUNTIMES = arg('runtimes', 'node,deno').split(',');
const ROUNDS = Number(arg('rounds', '20'));
const TARGET_OVERHEAD_MS = 1;
// V8 flags for the Node server, as the image runs it (see Dockerfile); override to experiment.
const SERVER_NODE_FLAGS = arg('node-flags', '')
  .split(' ')
  .filter((f) => f !== '');

const ENDPOINTS: Record<string, string> = {
  noop: '/noop',
  pods: '/validate/pods',
  captures: '/validate/captures',
};

// Realistic allowed requests: a pool pod being bound (UPDATE, old and new object), a Capture claim renewal.
const bigPod = (state: PodState, claim?: { name: string; uid: string }) => {
  const p = poolPod(
    'web-7f9c2',
    ...(claim ? [claimedBy(podClaim(claim.name, withUid(claim.uid)))] : []),
    withState(state),
    ownedBy(podPool('web', withUid('u'))),
  );
  p.spec = {
    containers: [
      {
        name: 'main',
        image: 'registry.invalid/web:1.2.3',
        env: Array.from({ length: 10 }, (_, i) => ({ name: `ENV_${i}`, value: `value-${i}` })),
        resources: { requests: { cpu: '100m', memory: '128Mi' } },
        ports: [{ containerPort: 8080 }],
      },
    ],
    nodeName: 'node-1',
  };
  return p;
};
const BODIES: Record<string, string> = {
  pods: JSON.stringify(
    reviewFor({
      kind: 'Pod',
      uid: 'bench-pods',
      oldObject: bigPod('Idle'),
      object: bigPod('Bound', { name: 'claim-x', uid: 'claim-x-uid' }),
    }),
  ),
  captures: JSON.stringify(
    reviewFor({
      kind: 'Capture',
      uid: 'bench-captures',
      subResource: 'status',
      oldObject: capture(
        'cap',
        captureStatus({ phase: 'Capturing', epoch: 7, claim: captureClaim('pod-a', 7) }),
      ),
      object: capture(
        'cap',
        captureStatus({
          phase: 'Capturing',
          epoch: 7,
          claim: { ...captureClaim('pod-a', 7), renewTime: '2026-01-01T00:01:00Z' },
        }),
      ),
    }),
  ),
};
BODIES.noop = BODIES.pods!;

function once(agent: Agent, port: number, path: string, body: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path,
        method: 'POST',
        ca,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Stats {
  requests: number;
  errors: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  achievedRps: number;
  /** How late the generator sent requests (timer granularity, its own pauses); not server latency. */
  sendLateP99Ms: number;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Open-loop run: `count` requests due every 1/rate s; latency counted from the send. */
async function openLoop(
  agent: Agent,
  port: number,
  ca: Buffer,
  name: string,
  count: number,
): Promise<{ lat: number[]; late: number[]; errors: number; seconds: number }> {
  const path = ENDPOINTS[name]!;
  const body = BODIES[name]!;
  const lat: number[] = [];
  const late: number[] = [];
  let errors = 0;
  const interval = 1000 / RATE;
  const t0 = performance.now() + 5;
  const inflight: Promise<void>[] = [];
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < count && t0 + next * interval <= now) {
        const sent = performance.now();
        late.push(sent - (t0 + next * interval));
        next++;
        inflight.push(
          once(agent, port, path, body, ca).then(
            (status) => {
              if (status !== 200) errors++;
              lat.push(performance.now() - sent);
            },
            () => {
              errors++;
            },
          ),
        );
      }
      // Sleep until the next request is due rather than spinning with setImmediate: a spinning
      // generator takes a whole core, and on a 2-core machine the server then shares the other with
      // its own GC and compiler threads, which showed up as ~100 ms stalls charged to the server.
      if (next >= count) resolve();
      else setTimeout(tick, Math.max(0, t0 + next * interval - performance.now()));
    };
    tick();
  });
  await Promise.all(inflight);
  return { lat, late, errors, seconds: (performance.now() - t0) / 1000 };
}

function stats(lat: number[], late: number[], errors: number, seconds: number): Stats {
  const sorted = [...lat].sort((a, b) => a - b);
  const lateSorted = [...late].sort((a, b) => a - b);
  return {
    requests: lat.length + errors,
    errors,
    p50Ms: r3(pct(sorted, 50)),
    p90Ms: r3(pct(sorted, 90)),
    p99Ms: r3(pct(sorted, 99)),
    maxMs: r3(sorted[sorted.length - 1] ?? Number.NaN),
    achievedRps: Math.round(lat.length / seconds),
    sendLateP99Ms: r3(pct(lateSorted, 99)),
  };
}

/** The handlers alone, in this process (no TLS, no sockets): what the rules cost over a no-op. */
async function inProcess(iterations = 20_000): Promise<Record<string, { p50Us: number; p99Us: number }>> {
  const app = benchApp();
  const out: Record<string, { p50Us: number; p99Us: number }> = {};
  for (const round of [0, 1]) {
    for (const name of Object.keys(ENDPOINTS)) {
      const times: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const t = performance.now();
        const res = await app.fetch(
          new Request(`https://localhost${ENDPOINTS[name]}`, { method: 'POST', body: BODIES[name] }),
        );
        await res.text();
        times.push(performance.now() - t);
      }
      if (round === 0) continue; // warm-up round
      times.sort((a, b) => a - b);
      out[name] = { p50Us: Math.round(pct(times, 50) * 1000), p99Us: Math.round(pct(times, 99) * 1000) };
    }
  }
  return out;
}

/** Closed loop, `concurrency` requests in flight for `seconds`: the most this server answers per second. */
async function closedLoop(
  agent: Agent,
  port: number,
  ca: Buffer,
  name: string,
  seconds = 2,
  concurrency = 16,
) {
  const path = ENDPOINTS[name]!;
  const body = BODIES[name]!;
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await once(agent, port, path, body, ca);
      done++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return Math.round(done / ((performance.now() - start) / 1000));
}

async function benchRuntime(runtime: string, cert: ReturnType<typeof makeCert>, deno: string | undefined) {
  let server: Started;
  if (runtime === 'node') {
    server = await startProcess(process.execPath, [
      ...SERVER_NODE_FLAGS,
      '--conditions=@claimkit/source',
      join('bench', 'server-node.ts'),
      cert.certFile,
      cert.keyFile,
    ]);
  } else {
    if (deno === undefined) return { skipped: 'the deno npm package did not install a working binary' };
    server = await startProcess(deno, [
      'run',
      '--node-modules-dir=manual',
      '--conditions=@claimkit/source',
      '-A',
      join('bench', 'server-deno.ts'),
      cert.certFile,
      cert.keyFile,
    ]);
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  try {
    // Warm up JIT, TLS sessions and connections on every endpoint.
    const warmupLat: number[] = [];
    for (const name of Object.keys(ENDPOINTS))
      warmupLat.push(...(await openLoop(agent, server.port, cert.cert, name, WARMUP / 3)).lat);
    const warmupP99Ms = r3(
      pct(
        [...warmupLat].sort((a, b) => a - b),
        99,
      ),
    );
    // Rounds with a rotating order, so that noise from the rest of the machine spreads evenly.
    const names = Object.keys(ENDPOINTS);
    const acc: Record<string, { lat: number[]; late: number[]; errors: number; seconds: number }> = {};
    for (const n of names) acc[n] = { lat: [], late: [], errors: 0, seconds: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(round + j) % names.length]!;
        const r = await openLoop(agent, server.port, cert.cert, name, Math.ceil(COUNT / ROUNDS));
        acc[name]!.lat.push(...r.lat);
        acc[name]!.late.push(...r.late);
        acc[name]!.errors += r.errors;
        acc[name]!.seconds += r.seconds;
      }
    }
    const out: Record<string, Stats> = {};
    for (const n of names) {
      out[n] = stats(acc[n]!.lat, acc[n]!.late, acc[n]!.errors, acc[n]!.seconds);
      console.error(`${runtime} ${n}: ${JSON.stringify(out[n])}`);
    }
    const noop = out.noop!;
    const overhead = {
      pods: { p50Ms: r3(out.pods!.p50Ms - noop.p50Ms), p99Ms: r3(out.pods!.p99Ms - noop.p99Ms) },
      captures: {
        p50Ms: r3(out.captures!.p50Ms - noop.p50Ms),
        p99Ms: r3(out.captures!.p99Ms - noop.p99Ms),
      },
    };
    const maxThroughputRps: Record<string, number> = {};
    for (const name of Object.keys(ENDPOINTS)) {
      maxThroughputRps[name] = await closedLoop(agent, server.port, cert.cert, name);
    }
    console.error(`${runtime} max throughput (16 in flight): ${JSON.stringify(maxThroughputRps)}`);
    return {
      version:
        runtime === 'node' ? process.version : execFileSync(deno!, ['--version']).toString().split('\n')[0],
      warmupP99Ms,
      atRate: out,
      overheadVsNoop: overhead,
      maxThroughputRps,
      meetsTarget: overhead.pods.p99Ms <= TARGET_OVERHEAD_MS && overhead.captures.p99Ms <= TARGET_OVERHEAD_MS,
    };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

const loadBefore = loadavg()[0]!;
const cert = makeCert();
const deno = RUNTIMES.includes('deno') ? denoBinary() : undefined;
const handlersInProcess = await inProcess();
console.error(`in process (node): ${JSON.stringify(handlersInProcess)}`);
const runtimes: Record<string, unknown> = {};
for (const rt of RUNTIMES) runtimes[rt] = await benchRuntime(rt, cert, deno);

const result = {
  date: new Date().toISOString(),
  command: 'node --conditions=@claimkit/source packages/webhook/bench/latency.ts',
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? '',
    loadAvg1mBefore: r3(loadBefore),
    loadAvg1mAfter: r3(loadavg()[0]!),
  },
  method:
    'TLS on 127.0.0.1, keep-alive; after a warm-up of `warmup` requests (warmupP99Ms), open loop at `rate` req/s for `count` requests per endpoint (in `rounds` rounds of rotating order), latency from the send (the generator sleeps between sends; its lateness is sendLateP99Ms); then a closed loop with 16 in flight for 2 s (max throughput). Server in its own process, load generator in Node. handlersInProcessNode: app.fetch alone, no sockets.',
  rounds: ROUNDS,
  rate: RATE,
  warmup: WARMUP,
  count: COUNT,
  requestBytes: { pods: BODIES.pods!.length, captures: BODIES.captures!.length },
  targetP99OverheadMs: TARGET_OVERHEAD_MS,
  handlersInProcessNode: handlersInProcess,
  runtimes,
};
const file = join(WEBHOOK_DIR, '..', '..', 'bench', 'results.json');
let all: Record<string, unknown> = {};
if (existsSync(file)) {
  try {
    all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    console.error(`bench/results.json was not JSON; starting it anew`);
  }
}
all.webhook = result;
mkdirSync(join(WEBHOOK_DIR, '..', '..', 'bench'), { recursive: true });
writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
