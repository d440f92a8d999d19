// The transport's HTTP library on Node: node:http/node:https, kept-alive connections (a bounded pool
// for requests, another for watches) sharing one parsed TLS context. client-node's fetch path
// (undici, web streams, an AbortSignal and a new dispatcher per request) cost the controller more
// CPU than its reconciles. Credentials are read from the KubeConfig at most every AUTH_REFRESH_MS
// (and again after a 401), so tokens from files and exec plugins still rotate; the agents are new
// only when the TLS material changes. A kubeconfig proxy-url goes through fetch-http.ts instead.
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  type BackendResponse,
  type HttpBackend,
  type PreparedRequest,
  timeoutError,
} from './http-backend.ts';

/** How long credentials from the KubeConfig are reused (client-go re-reads a token file every minute). */
export const AUTH_REFRESH_MS = 10_000;

/**
 * Connections for requests: at most this many at once (a slow-start burst of pod creates queues on
 * them instead of opening a TLS connection each), this many kept for reuse. client-go keeps 25 idle.
 */
export const MAX_REQUEST_SOCKETS = 32;
const MAX_FREE_SOCKETS = 16;

interface Agents {
  /** Requests answered at once (get, list, writes): bounded, kept alive. */
  requests: http.Agent;
  /** Watches, each holding its connection for minutes: unbounded, apart from the requests. */
  streams: http.Agent;
}

interface Credentials {
  agents: Agents;
  headers: Record<string, string>;
  /** Basic auth `user:password`. */
  auth?: string;
  /** When these were read (ms, performance.now()). */
  at: number;
}

const TLS_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

type TlsOptions = Pick<https.AgentOptions, (typeof TLS_FIELDS)[number]>;

const sameTls = (a: TlsOptions, b: TlsOptions) =>
  TLS_FIELDS.every((f) => {
    const x = a[f] as unknown;
    const y = b[f] as unknown;
    if (Buffer.isBuffer(x) && Buffer.isBuffer(y)) return x.equals(y);
    return x === y;
  });

/**
 * Kept-alive connections to the one API server. Node names a connection pool per request from the
 * request's host and TLS options (stringifying the CA, certificate and key each time); this agent
 * serves one server with one identity, so its pool has one name, and every new connection shares
 * one parsed TLS context instead of parsing the certificates again.
 */
class OneServerHttpsAgent extends https.Agent {
  constructor(secureContext: tls.SecureContext, rest: https.AgentOptions, limits: http.AgentOptions) {
    super({ ...rest, ...limits, secureContext, keepAlive: true, scheduling: 'lifo' });
  }

  override getName(): string {
    return 'kube-apiserver';
  }
}

class OneServerHttpAgent extends http.Agent {
  constructor(limits: http.AgentOptions) {
    super({ ...limits, keepAlive: true, scheduling: 'lifo' });
  }

  override getName(): string {
    return 'kube-apiserver';
  }
}

const REQUEST_LIMITS: http.AgentOptions = {
  maxSockets: MAX_REQUEST_SOCKETS,
  maxFreeSockets: MAX_FREE_SOCKETS,
};
const STREAM_LIMITS: http.AgentOptions = { maxFreeSockets: 4 };

function newAgents(secure: boolean, tlsOptions: TlsOptions): Agents {
  if (!secure) {
    return {
      requests: new OneServerHttpAgent(REQUEST_LIMITS),
      streams: new OneServerHttpAgent(STREAM_LIMITS),
    };
  }
  const { ca, cert, key, pfx, passphrase, ...rest } = tlsOptions;
  const context = tls.createSecureContext({ ca, cert, key, pfx, passphrase });
  return {
    requests: new OneServerHttpsAgent(context, rest, REQUEST_LIMITS),
    streams: new OneServerHttpsAgent(context, rest, STREAM_LIMITS),
  };
}

export class NodeHttpBackend implements HttpBackend {
  private readonly kc: KubeConfig;
  private readonly url: URL;
  private readonly secure: boolean;
  private creds: Credentials | undefined;
  private refreshing: Promise<Credentials> | undefined;
  private tls: TlsOptions | undefined;

  constructor(kc: KubeConfig, server: string) {
    if (kc.getCurrentCluster()?.proxyUrl) {
      throw new Error('kubeconfig: a cluster with proxy-url needs the fetch HTTP library (http: "fetch")');
    }
    this.kc = kc;
    this.url = new URL(server);
    this.secure = this.url.protocol === 'https:';
  }

  close(): void {
    this.creds?.agents.requests.destroy();
    this.creds?.agents.streams.destroy();
  }

  /** Forget the credentials (after a 401), so the next request reads them anew. */
  invalidate(): void {
    if (this.creds) this.creds.at = Number.NEGATIVE_INFINITY;
  }

  private credentials(): Credentials | Promise<Credentials> {
    const c = this.creds;
    if (c && performance.now() - c.at < AUTH_REFRESH_MS) return c;
    this.refreshing ??= this.readCredentials().finally(() => {
      this.refreshing = undefined;
    });
    // Requests keep flowing with the old credentials while new ones are read (an exec plugin can
    // take seconds), unless there are none yet or they were refused.
    return c && c.at !== Number.NEGATIVE_INFINITY ? c : this.refreshing;
  }

  private async readCredentials(): Promise<Credentials> {
    const o: https.RequestOptions & { headers?: Record<string, string> } = {};
    await this.kc.applyToHTTPSOptions(o);
    const tls: TlsOptions = {};
    for (const f of TLS_FIELDS) if (o[f] !== undefined) (tls as Record<string, unknown>)[f] = o[f];
    // New agents only when the TLS material changed (a rotated client certificate).
    let agents = this.creds?.agents;
    if (!agents || !this.tls || !sameTls(this.tls, tls)) {
      const old = agents;
      agents = newAgents(this.secure, tls);
      // In-flight requests finish on the old agents; then their sockets close.
      if (old)
        setTimeout(() => {
          old.requests.destroy();
          old.streams.destroy();
        }, 60_000).unref();
      this.tls = tls;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) headers[k] = String(v);
    this.creds = { agents, headers, at: performance.now(), ...(o.auth ? { auth: o.auth } : {}) };
    return this.creds;
  }

  async send(
    req: PreparedRequest,
    o: { timeoutMs: number; signal?: AbortSignal; stream?: boolean },
  ): Promise<BackendResponse> {
    const creds = await this.credentials();
    const res = await this.request(req, creds, o);
    if (res.status === 401) this.invalidate();
    return res;
  }

  private request(
    req: PreparedRequest,
    creds: Credentials,
    o: { timeoutMs: number; signal?: AbortSignal; stream?: boolean },
  ): Promise<NodeResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...req.headers, ...creds.headers };
      if (req.body !== undefined) headers['Content-Length'] = Buffer.byteLength(req.body);
      const options: http.RequestOptions = {
        protocol: this.url.protocol,
        hostname: this.url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: this.url.port || (this.secure ? 443 : 80),
        path: this.url.pathname.replace(/\/+$/, '') + req.pathAndQuery,
        method: req.method,
        headers,
        agent: o.stream ? creds.agents.streams : creds.agents.requests,
        ...(creds.auth ? { auth: creds.auth } : {}),
      };
      const r = (this.secure ? https : http).request(options);
      let settled = false;
      const state: { killedBy?: Error } = {};
      const fail = (e: Error) => {
        state.killedBy ??= e;
        r.destroy(e);
        if (!settled) {
          settled = true;
          reject(e);
        }
      };
      // One timer per request: until the headers, then (for text()) until the end of the body.
      const timer = setTimeout(() => fail(timeoutError(o.timeoutMs)), o.timeoutMs);
      const onAbort = () => fail(o.signal?.reason instanceof Error ? o.signal.reason : abortError());
      if (o.signal) {
        if (o.signal.aborted) return onAbort();
        o.signal.addEventListener('abort', onAbort, { once: true });
      }
      const done = () => {
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
      };
      r.on('error', (e) => {
        done();
        if (!settled) {
          settled = true;
          reject(e);
        }
      });
      r.on('response', (res) => {
        settled = true;
        resolve(new NodeResponse(res, timer, done, state, (e) => r.destroy(e)));
      });
      r.end(req.body);
    });
  }
}

function abortError(): Error {
  const e = new Error('request aborted');
  e.name = 'AbortError';
  return e;
}

function ignoreLateError(): void {}

class NodeResponse implements BackendResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  private readonly res: http.IncomingMessage;
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly done: () => void;
  /** The timeout or abort that ended the request, which the body's own error would hide. */
  private readonly state: { killedBy?: Error };
  private readonly destroy: (e?: Error) => void;

  constructor(
    res: http.IncomingMessage,
    timer: ReturnType<typeof setTimeout>,
    done: () => void,
    state: { killedBy?: Error },
    destroy: (e?: Error) => void,
  ) {
    this.res = res;
    this.status = res.statusCode ?? 0;
    this.headers = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v !== undefined) this.headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    this.timer = timer;
    this.done = done;
    this.state = state;
    this.destroy = destroy;
  }

  text(): Promise<string> {
    return new Promise((resolve, reject) => {
      let chunks: Buffer[] = [];
      const onData = (c: Buffer) => chunks.push(c);
      // Settling removes every listener: a response object outlives its request (an agent's socket
      // or TLS session can hold it), and a listener left on it would keep the body and its text.
      const settle = (e?: Error) => {
        this.res.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
        // A late error on a read response (its socket failing) must not be an unhandled 'error'.
        this.res.on('error', ignoreLateError);
        this.done();
        if (e) {
          chunks = [];
          reject(this.state.killedBy ?? e);
          return;
        }
        const body =
          chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
        chunks = [];
        resolve(body);
      };
      const onEnd = () => settle();
      const onError = (e: Error) => settle(e);
      const onClose = () => {
        if (!this.res.complete) settle(new Error('the response ended before its body was complete'));
      };
      this.res.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
    });
  }

  stream(onChunk: (chunk: Uint8Array) => boolean): Promise<void> {
    // A stream outlives the request timeout: only the caller's signal (and its inactivity limit) ends it.
    clearTimeout(this.timer);
    return new Promise((resolve, reject) => {
      let over = false;
      const finish = (e?: Error) => {
        if (over) return;
        over = true;
        this.done();
        if (e) reject(this.state.killedBy ?? e);
        else resolve();
      };
      this.res.on('data', (c: Buffer) => {
        if (over) return;
        let more: boolean;
        try {
          more = onChunk(c);
        } catch (e) {
          // The caller's failure ends the stream as a failure, never as an uncaught exception.
          finish(e instanceof Error ? e : new Error(String(e)));
          this.destroy();
          return;
        }
        if (!more) {
          finish();
          this.destroy();
        }
      });
      this.res.once('end', () => finish());
      this.res.once('error', (e) => finish(e));
      this.res.once('close', () => {
        if (!this.res.complete) finish(new Error('the watch stream was cut off'));
        else finish();
      });
    });
  }
}
