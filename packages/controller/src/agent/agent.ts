// The reference capture agent: the Http backend protocol of DESIGN.md over node:http.
//   POST {base}        {namespace,pod,uid,container,node,capture,token} -> 201 {id}
//   GET  {base}/{id}   -> {state: Running|Succeeded|Failed, ref?, error?}
//   GET  /healthz, GET /debug/tokens (accepted tokens per capture, in order)
// It fences too: a token lower than the highest it has seen for that capture gets 409, and it is
// idempotent per (capture, token): a repeated start returns the same job. What a "capture" does is
// pluggable (`capture`); the default waits `durationMs` and returns a snapshot ref.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AgentJobRequest {
  namespace: string;
  pod: string;
  uid: string;
  container: string;
  node: string;
  capture: string;
  token: number;
}

type JobState =
  | { state: 'Running' }
  | { state: 'Succeeded'; ref: string }
  | { state: 'Failed'; error: string };

export interface CaptureAgentOptions {
  /** URL path the protocol is served under (default /v1/captures). */
  basePath?: string;
  /** How long the default capture takes (default 2000 ms). */
  durationMs?: number;
  /** The capture itself; resolves to a ref or throws. */
  capture?: (req: AgentJobRequest, signal: AbortSignal) => Promise<string>;
  log?: (line: Record<string, unknown>) => void;
}

interface Job {
  id: string;
  req: AgentJobRequest;
  state: JobState;
  abort: AbortController;
}

const MAX_BODY = 64 * 1024;

export class CaptureAgent {
  private readonly o: CaptureAgentOptions;
  private readonly basePath: string;
  private readonly jobs = new Map<string, Job>();
  private readonly byToken = new Map<string, string>(); // `${ns}/${capture}#${token}` -> id
  private readonly highest = new Map<string, number>();
  /** Tokens accepted per capture (`namespace/name`), in order: they must strictly increase. */
  readonly accepted = new Map<string, number[]>();
  /** Starts refused for a stale token. */
  rejected = 0;
  private server: Server | undefined;

  constructor(opts: CaptureAgentOptions = {}) {
    this.o = opts;
    this.basePath = (opts.basePath ?? '/v1/captures').replace(/\/+$/, '');
  }

  /** Starts (or finds) a job; throws StaleToken for a token below the highest seen. */
  start(req: AgentJobRequest): { id: string; created: boolean } {
    const cap = `${req.namespace}/${req.capture}`;
    const existing = this.byToken.get(`${cap}#${req.token}`);
    if (existing) return { id: existing, created: false };
    const top = this.highest.get(cap) ?? 0;
    if (req.token < top) {
      this.rejected++;
      throw new StaleToken(`token ${req.token} is lower than ${top}, the highest seen for ${cap}`);
    }
    this.highest.set(cap, req.token);
    this.accepted.set(cap, [...(this.accepted.get(cap) ?? []), req.token]);
    // A newer token supersedes older jobs of the same capture.
    for (const j of this.jobs.values()) {
      if (`${j.req.namespace}/${j.req.capture}` === cap && j.state.state === 'Running') {
        j.abort.abort();
        j.state = { state: 'Failed', error: `superseded by token ${req.token}` };
      }
    }
    const job: Job = { id: randomUUID(), req, state: { state: 'Running' }, abort: new AbortController() };
    this.jobs.set(job.id, job);
    this.byToken.set(`${cap}#${req.token}`, job.id);
    this.o.log?.({ msg: 'job started', id: job.id, ...req });
    void this.run(job);
    return { id: job.id, created: true };
  }

  job(id: string): JobState | undefined {
    return this.jobs.get(id)?.state;
  }

  private async run(job: Job): Promise<void> {
    const capture =
      this.o.capture ??
      ((req: AgentJobRequest, signal: AbortSignal) =>
        new Promise<string>((resolve, reject) => {
          const t = setTimeout(
            () => resolve(`snapshot://${req.namespace}/${req.capture}/${req.pod}@${req.token}`),
            this.o.durationMs ?? 2000,
          );
          signal.addEventListener('abort', () => {
            clearTimeout(t);
            reject(new Error('aborted'));
          });
        }));
    try {
      const ref = await capture(job.req, job.abort.signal);
      if (job.state.state === 'Running') job.state = { state: 'Succeeded', ref };
    } catch (e) {
      if (job.state.state === 'Running') job.state = { state: 'Failed', error: (e as Error).message };
    }
    this.o.log?.({ msg: 'job finished', id: job.id, ...job.state });
  }

  /** Violations of "accepted tokens strictly increase per capture" (must be empty). */
  tokenViolations(): string[] {
    const out: string[] = [];
    for (const [cap, ts] of this.accepted) {
      for (let i = 1; i < ts.length; i++)
        if (ts[i]! <= ts[i - 1]!) out.push(`${cap}: token ${ts[i]} accepted after ${ts[i - 1]}`);
    }
    return out;
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    void this.route(req, res).catch((e) => send(res, 500, { error: (e as Error).message }));
  };

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://agent').pathname.replace(/\/+$/, '') || '/';
    if (req.method === 'GET' && path === '/healthz') return send(res, 200, { ok: true });
    if (req.method === 'GET' && path === '/debug/tokens')
      return send(res, 200, { accepted: Object.fromEntries(this.accepted), rejected: this.rejected });
    if (path === this.basePath) {
      if (req.method !== 'POST') return send(res, 405, { error: 'use POST' });
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req));
      } catch (e) {
        return send(res, 400, { error: `body: ${(e as Error).message}` });
      }
      const r = parseRequest(body);
      if (typeof r === 'string') return send(res, 400, { error: r });
      try {
        const { id, created } = this.start(r);
        return send(res, created ? 201 : 200, { id });
      } catch (e) {
        if (e instanceof StaleToken) return send(res, 409, { error: e.message });
        throw e;
      }
    }
    if (path.startsWith(`${this.basePath}/`) && req.method === 'GET') {
      const id = decodeURIComponent(path.slice(this.basePath.length + 1));
      const st = this.job(id);
      if (!st) return send(res, 404, { error: `no job ${id}` });
      return send(res, 200, st);
    }
    return send(res, 404, { error: `no route ${req.method} ${path}` });
  }

  async listen(port = 8750, host = '0.0.0.0'): Promise<{ url: string; port: number }> {
    this.server = createServer(this.handle);
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    const a = this.server.address() as AddressInfo;
    const h = host === '0.0.0.0' ? '127.0.0.1' : host;
    return { url: `http://${h}:${a.port}${this.basePath}`, port: a.port };
  }

  async close(): Promise<void> {
    for (const j of this.jobs.values()) j.abort.abort();
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
}

export class StaleToken extends Error {
  override readonly name = 'StaleToken';
}

function parseRequest(b: unknown): AgentJobRequest | string {
  if (!b || typeof b !== 'object') return 'body must be a JSON object';
  const o = b as Record<string, unknown>;
  for (const f of ['namespace', 'pod', 'capture'] as const)
    if (typeof o[f] !== 'string' || o[f] === '') return `${f}: required string`;
  for (const f of ['uid', 'container', 'node'] as const)
    if (o[f] !== undefined && typeof o[f] !== 'string') return `${f}: must be a string`;
  if (typeof o.token !== 'number' || !Number.isInteger(o.token) || o.token < 1)
    return 'token: must be a positive integer';
  return {
    namespace: o.namespace as string,
    pod: o.pod as string,
    uid: (o.uid as string) ?? '',
    container: (o.container as string) ?? '',
    node: (o.node as string) ?? '',
    capture: o.capture as string,
    token: o.token,
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
