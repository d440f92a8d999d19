// The reference capture agent: the Http backend protocol of DESIGN.md over node:http.
//   POST {base}        {namespace,pod,uid,container,node,capture,token} -> 201 {id}
//   GET  {base}/{id}   -> {state: Running|Succeeded|Failed, ref?, error?}
//   GET  /healthz, GET /debug/tokens (accepted tokens per capture, in order)
// It fences too: a token lower than the highest it has seen for that capture gets 409, and it is
// idempotent per (capture, token): a repeated start returns the same job; a newer token supersedes
// (aborts) the capture's older Running jobs.
//
// What a capture does is pluggable: `capture` (a function), else `durationMs` (the sleep capture:
// waits, then returns a made-up snapshot:// ref; tests and demos), else the kubelet checkpoint
// capture (kubelet.ts; options in `kubelet`), the default.
//
// With `stateDir`, everything the fencing and the jobs need survives a restart (state.ts): it is
// saved atomically on every change, before a start is answered. On start the agent loads it, and
// runs again each job that was Running when it stopped (a second checkpoint of the same token
// replaces the stored archive of that token). Without `stateDir` the state is in memory only.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CAPTURE_AGENT_PORT, TokenFence } from '@claimkit/core';
import type { Logger } from '../log.ts';
import type { Authenticate } from './auth.ts';
import { type KubeletCaptureOptions, kubeletCapture } from './kubelet.ts';
import {
  type AgentJob,
  type AgentJobRequest,
  type AgentJobState,
  type AgentState,
  AgentStateError,
  StateStore,
} from './state.ts';

export type { AgentJob, AgentJobRequest, AgentJobState } from './state.ts';
export { AgentStateError } from './state.ts';

/** The capture itself: resolves to the job's ref, or throws (the job Fails with its message). */
export type CaptureFn = (req: AgentJobRequest, signal: AbortSignal) => Promise<string>;

export type AgentLogLevel = 'debug' | 'info' | 'warn' | 'error';
/** One log line: level and msg, then fields. */
export type AgentLogLine = { level: AgentLogLevel; msg: string; [field: string]: unknown };

/** The agent's lines through a Logger, so the bin writes the one log shape of every claimkit binary. */
export function agentLogTo(logger: Logger): (line: AgentLogLine) => void {
  return ({ level, msg, ...fields }) => logger[level](msg, fields);
}

export interface CaptureAgentOptions {
  /** URL path the protocol is served under (default /v1/captures). */
  basePath?: string;
  /** The sleep capture: each job waits this long and returns a snapshot:// ref (no real capture). */
  durationMs?: number;
  /** The capture itself (wins over `durationMs` and `kubelet`). */
  capture?: CaptureFn;
  /** Options of the kubelet checkpoint capture, the default capture. */
  kubelet?: KubeletCaptureOptions;
  /** Where the state is saved (absent: memory only). */
  stateDir?: string;
  /** Finished jobs of a superseded token are forgotten this long after they finished (default 24 h). */
  retainMs?: number;
  /** Wall clock (ms), for timestamps and retention. */
  now?: () => number;
  log?: (line: AgentLogLine) => void;
  /**
   * Who may use the protocol (auth.ts: a ServiceAccount token for the agent's audience, reviewed by
   * the API server). Absent: anyone who reaches the port (tests, demos).
   */
  authenticate?: Authenticate;
}

const MAX_BODY = 64 * 1024;
const DAY_MS = 24 * 3600 * 1000;
const CLOSE_GRACE_MS = 10_000;

/** The sleep capture: waits `durationMs`, then returns `snapshot://<ns>/<capture>/<pod>@<token>`. */
export function sleepCapture(durationMs: number): CaptureFn {
  return (req, signal) =>
    new Promise<string>((resolve, reject) => {
      const t = setTimeout(
        () => resolve(`snapshot://${req.namespace}/${req.capture}/${req.pod}@${req.token}`),
        durationMs,
      );
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        reject(new Error('aborted'));
      });
    });
}

export class CaptureAgent {
  private readonly o: CaptureAgentOptions;
  private readonly basePath: string;
  private readonly capture: CaptureFn;
  private readonly now: () => number;
  private store: StateStore | undefined;
  private readonly jobs = new Map<string, AgentJob>();
  /** The token fence (core's capture/token-fence.ts, which the simulator's agent runs too). */
  private fence = new TokenFence();
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private closing = false;
  /** Tokens accepted per capture (`namespace/name`), in order: they must strictly increase. */
  get accepted(): ReadonlyMap<string, readonly number[]> {
    return this.fence.acceptedTokens;
  }
  /** Starts refused for a stale token. */
  rejected = 0;
  private server: Server | undefined;

  /** Loads the saved state (with `stateDir`) and runs again the jobs that were Running. */
  constructor(opts: CaptureAgentOptions = {}) {
    this.o = opts;
    this.basePath = (opts.basePath ?? '/v1/captures').replace(/\/+$/, '');
    this.now = opts.now ?? Date.now;
    this.capture =
      opts.capture ??
      (opts.durationMs !== undefined
        ? sleepCapture(opts.durationMs)
        : kubeletCapture({ ...opts.kubelet, log: opts.kubelet?.log ?? ((l) => this.log(l)) }));
    if (opts.stateDir !== undefined) {
      this.store = new StateStore(opts.stateDir, (level, msg, fields) => this.log({ level, msg, ...fields }));
      this.restore(this.store.load(new Date(this.now())));
    }
  }

  private log(line: AgentLogLine): void {
    this.o.log?.(line);
  }

  private restore(s: AgentState): void {
    this.fence = new TokenFence(s);
    this.rejected = s.rejected;
    for (const j of s.jobs) {
      this.jobs.set(j.id, j);
      this.fence.remember(capKey(j.req), j.req.token, j.id);
    }
    this.prune();
    const again = [...this.jobs.values()].filter((j) => j.state.state === 'Running');
    for (const j of again) j.runs++;
    if (again.length) {
      try {
        this.persist();
      } catch (e) {
        this.log({ level: 'error', msg: 'cannot save the state', error: (e as Error).message });
      }
    }
    for (const j of again) {
      this.log({
        level: 'warn',
        msg: 'job was Running when the agent stopped: running its capture again (a second checkpoint of the same token replaces the archive stored for it)',
        id: j.id,
        run: j.runs,
        ...j.req,
      });
      this.run(j);
    }
  }

  private snapshot(): AgentState {
    return {
      ...this.fence.state(),
      rejected: this.rejected,
      jobs: [...this.jobs.values()],
    };
  }

  /** Saves the state (no-op in memory); throws AgentStateError. */
  private persist(): void {
    this.store?.save(this.snapshot());
  }

  /** Forgets finished jobs of superseded tokens that finished more than `retainMs` ago. */
  private prune(): void {
    const cutoff = this.now() - (this.o.retainMs ?? DAY_MS);
    for (const j of [...this.jobs.values()]) {
      if (j.state.state === 'Running' || !j.finishedAt) continue;
      if (j.req.token >= this.fence.highestOf(capKey(j.req))) continue;
      if (Date.parse(j.finishedAt) >= cutoff) continue;
      this.jobs.delete(j.id);
      this.fence.forget(capKey(j.req), j.req.token);
    }
  }

  /**
   * Starts (or finds) a job; throws StaleToken for a token below the highest seen, AgentStateError
   * when the state cannot be saved (then nothing changed).
   */
  start(req: AgentJobRequest): { id: string; created: boolean } {
    const cap = capKey(req);
    const judged = this.fence.judge(cap, req.token);
    if (judged.verdict === 'existing') return { id: judged.jobId, created: false };
    if (judged.verdict === 'stale') {
      this.rejected++;
      throw new StaleToken(`token ${req.token} is lower than ${judged.highest}, the highest seen for ${cap}`);
    }
    // A newer token supersedes older jobs of the same capture.
    const superseded = [...this.jobs.values()].filter(
      (j) => capKey(j.req) === cap && j.state.state === 'Running',
    );
    const at = new Date(this.now()).toISOString();
    const job: AgentJob = { id: randomUUID(), req, state: { state: 'Running' }, startedAt: at, runs: 1 };
    const undo = this.fence.accept(cap, req.token, job.id);
    for (const j of superseded) {
      j.state = { state: 'Failed', error: `superseded by token ${req.token}` };
      j.finishedAt = at;
    }
    this.jobs.set(job.id, job);
    try {
      this.persist();
    } catch (e) {
      // Not accepted: undo, so memory and disk agree.
      undo();
      for (const j of superseded) {
        j.state = { state: 'Running' };
        delete j.finishedAt;
      }
      this.jobs.delete(job.id);
      this.log({
        level: 'error',
        msg: 'start refused: the state cannot be saved',
        error: (e as Error).message,
        ...req,
      });
      throw e;
    }
    for (const j of superseded) {
      this.running.get(j.id)?.abort.abort();
      this.log({ level: 'info', msg: 'job superseded', id: j.id, by: req.token, ...j.req });
    }
    this.log({ level: 'info', msg: 'job started', id: job.id, ...req });
    this.run(job);
    return { id: job.id, created: true };
  }

  job(id: string): AgentJobState | undefined {
    return this.jobs.get(id)?.state;
  }

  private run(job: AgentJob): void {
    const entry = { abort: new AbortController(), done: Promise.resolve() };
    const { abort } = entry;
    this.running.set(job.id, entry);
    entry.done = (async () => {
      let outcome: AgentJobState;
      try {
        const ref: unknown = await this.capture(job.req, abort.signal);
        outcome =
          typeof ref === 'string' && ref !== ''
            ? { state: 'Succeeded', ref }
            : { state: 'Failed', error: `the capture returned no ref (${JSON.stringify(ref)})` };
      } catch (e) {
        outcome = { state: 'Failed', error: e instanceof Error ? e.message : String(e) };
      }
      this.running.delete(job.id);
      if (job.state.state !== 'Running') return; // superseded meanwhile
      if (this.closing && outcome.state === 'Failed') {
        // Stopped by close(): the job stays Running in the saved state and runs again on the next start.
        this.log({
          level: 'info',
          msg: 'job interrupted by shutdown: it runs again on the next start',
          id: job.id,
        });
        return;
      }
      job.state = outcome;
      job.finishedAt = new Date(this.now()).toISOString();
      this.prune();
      try {
        this.persist();
      } catch (e) {
        this.log({
          level: 'error',
          msg: 'cannot save a finished job (kept in memory)',
          id: job.id,
          error: (e as Error).message,
        });
      }
      this.log({
        level: outcome.state === 'Failed' ? 'warn' : 'info',
        msg: 'job finished',
        id: job.id,
        ...job.req,
        ...outcome,
      });
    })();
  }

  /** Violations of "accepted tokens strictly increase per capture" (must be empty). */
  tokenViolations(): string[] {
    return this.fence.violations();
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    void this.route(req, res).catch((e) => send(res, 500, { error: (e as Error).message }));
  };

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://agent').pathname.replace(/\/+$/, '') || '/';
    if (req.method === 'GET' && path === '/healthz') return send(res, 200, { ok: true });
    if (this.o.authenticate) {
      const who = await this.o.authenticate(req.headers.authorization);
      if (!who.ok) {
        this.o.log?.({
          level: 'warn',
          msg: 'request refused',
          method: req.method,
          path,
          status: who.status,
          error: who.error,
        });
        return send(res, who.status, { error: who.error });
      }
    }
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
        if (e instanceof AgentStateError) return send(res, 503, { error: e.message });
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

  async listen(port = CAPTURE_AGENT_PORT, host = '0.0.0.0'): Promise<{ url: string; port: number }> {
    this.server = createServer(this.handle);
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    const a = this.server.address() as AddressInfo;
    const h = host === '0.0.0.0' ? '127.0.0.1' : host;
    return { url: `http://${h}:${a.port}${this.basePath}`, port: a.port };
  }

  /**
   * Stops serving and aborts the running captures (waiting up to 10 s for them); a job they leave
   * unfinished stays Running in the saved state and runs again on the next start. Nothing is saved
   * after close() returns.
   */
  async close(): Promise<void> {
    this.closing = true;
    const s = this.server;
    this.server = undefined;
    const stopped = s
      ? new Promise<void>((r) => {
          s.closeAllConnections();
          s.close(() => r());
        })
      : Promise.resolve();
    const runs = [...this.running.values()];
    for (const r of runs) r.abort.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(runs.map((r) => r.done)),
      new Promise<void>((r) => {
        timer = setTimeout(r, CLOSE_GRACE_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    this.store = undefined;
    await stopped;
  }
}

export class StaleToken extends Error {
  override readonly name = 'StaleToken';
}

const capKey = (r: Pick<AgentJobRequest, 'namespace' | 'capture'>) => `${r.namespace}/${r.capture}`;

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
