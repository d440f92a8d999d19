// request-cost: the CPU one API request and one watch event cost a Node process, through claimkit's
// kube client and informer, beside a bare node:https keep-alive request to the same API server with
// the same credentials. Issue 22's ≤ 2 ms of controller CPU per claim is measured against the four
// requests (pod patch, claim update, status patch, Event) and the watch events a bind costs at
// least; this benchmark says what those alone cost here. Measured in this process (the bench's own),
// sequentially (one request in flight), on a ConfigMap about the size of a cached pod: CPU from
// process.cpuUsage() (user + system, all threads), over `n` requests after 200 unmeasured ones; the
// modes take turns for three rounds and each reports its median round, so none is measured while
// the others' code is still being optimised.
import { Agent, type RequestOptions, request } from 'node:https';
import { Informer, loadKubeConfig } from '@claimkit/kube';
import { type BenchContext, benchNamespace, cleanup } from './context.ts';
import { atMost, type Target } from './stats.ts';

export interface RequestCostResult {
  method: string;
  requests: number;
  objectBytes: number;
  /** CPU ms per request, and wall ms per request (one in flight). */
  claimkitPatch: Cost;
  nodeHttpsPatch: Cost;
  /** A claimkit patch while a claimkit informer on the namespace receives and stores its event. */
  claimkitPatchWithInformer: Cost;
  /** The informer's share: claimkitPatchWithInformer − claimkitPatch. */
  watchEventCpuMs: number;
  /** Four requests and four watch events: the least a bind costs in I/O on this machine. */
  bindIoFloorCpuMs: number;
}

export interface Cost {
  cpuMs: number;
  userMs: number;
  systemMs: number;
  wallMs: number;
}

const WARM_UP = 200;
const ROUNDS = 3;

/** The round with the median CPU per request. */
export const medianByCpu = (cs: Cost[]): Cost =>
  [...cs].sort((a, b) => a.cpuMs - b.cpuMs)[Math.floor(cs.length / 2)]!;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function measure(n: number, one: (i: number) => Promise<unknown>): Promise<Cost> {
  for (let i = 0; i < WARM_UP; i++) await one(-1 - i);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await one(i);
  const c = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  return {
    cpuMs: r3((c.user + c.system) / n / 1000),
    userMs: r3(c.user / n / 1000),
    systemMs: r3(c.system / n / 1000),
    wallMs: r3(wall / n),
  };
}

export async function benchRequestCost(ctx: BenchContext, n: number): Promise<RequestCostResult> {
  const ns = await benchNamespace(ctx, 'bench-rc');
  const key = { namespace: ns, name: 'request-cost' };
  // About a cached pod's JSON (managedFields cut): 40 values of 60 characters.
  const data = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`key-${i}`, 'v'.repeat(60)]));
  const created = await ctx.kube.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...key },
    data,
  } as never);
  const objectBytes = JSON.stringify(created).length;
  const patchOf = (i: number) => ({ metadata: { annotations: { 'bench.claimkit.dev/i': String(i) } } });
  try {
    const claimkit = (i: number) => ctx.kube.patch('ConfigMap', key, patchOf(i));

    // The same PATCH over node:https: one kept-alive socket, the answer read and parsed. Credentials
    // (TLS material and auth headers) as client-node hands them to any https request.
    const kc = loadKubeConfig({ kubeconfig: ctx.kubeconfig });
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error(`${ctx.kubeconfig}: no current cluster`);
    const credentials: RequestOptions & { headers?: Record<string, string> } = {};
    await kc.applyToHTTPSOptions(credentials);
    const { ca, cert, key: privateKey, headers: authHeaders } = credentials;
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, cert, key: privateKey });
    const url = new URL(cluster.server);
    const path = `/api/v1/namespaces/${ns}/configmaps/${key.name}`;
    const bare = (i: number) =>
      new Promise<unknown>((resolve, reject) => {
        const body = JSON.stringify(patchOf(i));
        const req = request(
          {
            agent,
            host: url.hostname,
            port: url.port,
            path,
            method: 'PATCH',
            headers: {
              'content-type': 'application/merge-patch+json',
              'content-length': Buffer.byteLength(body),
              accept: 'application/json',
              ...authHeaders,
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString();
              if ((res.statusCode ?? 0) >= 300) reject(new Error(`PATCH ${path}: ${res.statusCode} ${text}`));
              else resolve(JSON.parse(text));
            });
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      });

    // With an informer on the namespace (as the controller's caches), each patch's event is decoded,
    // stored and handed to a handler before the next patch is sent. One informer per round, running
    // only while its mode is measured.
    let waiting: { version: string; resolve: () => void } | undefined;
    const withInformer = async (i: number) => {
      const seen = new Promise<void>((resolve) => {
        waiting = { version: String(i), resolve };
      });
      await ctx.kube.patch('ConfigMap', key, patchOf(i));
      await seen;
    };
    const measureWithInformer = async () => {
      const informer = new Informer(ctx.kube, 'ConfigMap', { namespace: ns });
      informer.addHandler({
        onUpdate: (_old, o) => {
          if (waiting && o.metadata.annotations?.['bench.claimkit.dev/i'] === waiting.version)
            waiting.resolve();
        },
      });
      await informer.start();
      try {
        return await measure(n, withInformer);
      } finally {
        informer.stop();
      }
    };
    const rounds: Cost[][] = [[], [], []];
    for (let round = 0; round < ROUNDS; round++) {
      rounds[0]!.push(await measure(n, claimkit));
      rounds[1]!.push(await measure(n, bare));
      rounds[2]!.push(await measureWithInformer());
    }
    agent.destroy();
    const [claimkitPatch, nodeHttpsPatch, claimkitPatchWithInformer] = rounds.map(medianByCpu) as [
      Cost,
      Cost,
      Cost,
    ];

    const watchEventCpuMs = r3(claimkitPatchWithInformer.cpuMs - claimkitPatch.cpuMs);
    return {
      method: `${n} sequential merge patches of one ConfigMap (${objectBytes} bytes of JSON) per mode and round after ${WARM_UP} unmeasured ones, modes taking turns for ${ROUNDS} rounds (each mode's median round reported), in the bench process; CPU = process.cpuUsage() user + system per request. claimkit: @claimkit/kube's client (node:http transport). node:https: a bare keep-alive request with the same credentials, answer parsed. With informer: claimkit's patch, then its watch event received, decoded and stored by an @claimkit/kube Informer before the next patch. bindIoFloorCpuMs = 4 x claimkit patch + 4 x watch event.`,
      requests: n,
      objectBytes,
      claimkitPatch,
      nodeHttpsPatch,
      claimkitPatchWithInformer,
      watchEventCpuMs,
      bindIoFloorCpuMs: Math.round((4 * claimkitPatch.cpuMs + 4 * watchEventCpuMs) * 100) / 100,
    };
  } finally {
    await cleanup(ctx, ns);
  }
}

/**
 * The summary's rows: the bind's I/O floor against issue 22's whole budget per claim (2 ms), and
 * claimkit's request against a bare node:https one (the client should add next to nothing).
 */
export function requestCostRows(r: RequestCostResult): Array<[string, Target]> {
  return [
    [
      `4 requests + 4 watch events, CPU ms (a bind's I/O; issue 22's budget per claim)`,
      atMost(r.bindIoFloorCpuMs, 2),
    ],
    [
      `claimkit patch / node:https patch, CPU (${r.claimkitPatch.cpuMs} / ${r.nodeHttpsPatch.cpuMs} ms)`,
      atMost(Math.round((r.claimkitPatch.cpuMs / r.nodeHttpsPatch.cpuMs) * 100) / 100, 1.1),
    ],
  ];
}
