// The HTTP side of the kube client. client-node's KubeConfig supplies the credentials (client
// certificates, tokens, exec plugins, TLS); an HttpBackend sends the request over one kept-alive
// connection pool (node:http on Node; client-node's fetch library on Deno or behind a proxy-url).
// Every request has a timeout; an answer that says the server did not process it (429, or 5xx
// with Retry-After) is sent again after the wait the server asked for; a request that got no
// answer at all becomes an ApiError naming the server.
import type { KubeConfig } from '@kubernetes/client-node';
import { type RequestDescription, transportError } from './errors.ts';
import { FetchHttpBackend } from './fetch-http.ts';
import type { BackendResponse, HttpBackend, PreparedRequest } from './http-backend.ts';
import { NodeHttpBackend } from './node-http.ts';

export interface TransportOptions {
  /** Per-request timeout (a watch: until its response headers). Default 30 s. */
  timeoutMs?: number;
  /** Sent as User-Agent. */
  userAgent?: string;
  /**
   * How many times a request answered 429, or 5xx with a Retry-After header, is sent again after
   * waiting what the server asked (at most 10 s each time), as client-go does; such an answer means
   * the server did not process it ("storage is (re)initializing", priority-and-fairness rejections).
   * Default 3; 0 turns it off.
   */
  retryThrottled?: number;
  /** Act as another user (kubectl --as / --as-group): Impersonate-User and Impersonate-Group headers. */
  impersonate?: { user: string; group?: string };
  /**
   * The HTTP library: `node` (node:http, one kept-alive agent; the default on Node) or `fetch`
   * (client-node's, the default on Deno and when the kubeconfig names a proxy-url).
   */
  http?: 'node' | 'fetch';
  /**
   * Decode answers and watch events without their metadata.managedFields, cut from the JSON text
   * before it is parsed (managed-fields.ts): for a client whose readers never look at them (the
   * controller's, whose informers drop them anyway). Default false: objects come as the server sent them.
   */
  omitManagedFields?: boolean;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path below the server URL, e.g. `/api/v1/namespaces/ns/pods`. */
  path: string;
  query?: Record<string, string | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** Default application/json. */
  contentType?: string;
  /** What the request is about, for messages: `podclaims ns/name`. */
  what: string;
}

export interface HttpResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  text: string;
}

/** Hears every attempt of a request: its HTTP status (0 when no answer came) and duration. */
export type AttemptObserver = (status: number, ms: number) => void;

const JSON_CT = 'application/json';
const MAX_RETRY_AFTER_SECONDS = 10;

/** Seconds to wait before sending a throttled request again, or undefined when it was not throttled. */
export function throttleWait(r: Pick<HttpResponse, 'status' | 'headers'>): number | undefined {
  const header = r.headers['retry-after'];
  const throttled = r.status === 429 || (r.status >= 500 && header !== undefined);
  const wait = Number(header);
  if (!throttled || !Number.isFinite(wait) || wait < 0) return undefined;
  return Math.min(wait, MAX_RETRY_AFTER_SECONDS);
}

/** Node runs node:http; Deno (whose node:http sits on fetch) and proxies use client-node's fetch. */
function defaultHttp(kc: KubeConfig): 'node' | 'fetch' {
  if ('Deno' in globalThis) return 'fetch';
  return kc.getCurrentCluster()?.proxyUrl ? 'fetch' : 'node';
}

export class KubeTransport {
  readonly kubeConfig: KubeConfig;
  /** The API server URL of the current context, without a trailing slash. */
  readonly server: string;
  readonly timeoutMs: number;
  /** Answers and watch events are parsed without metadata.managedFields (TransportOptions). */
  readonly omitManagedFields: boolean;
  private readonly backend: HttpBackend;
  private readonly retryThrottled: number;
  /** Accept, User-Agent and impersonation: the same on every request. */
  private readonly headers: Record<string, string>;

  constructor(kc: KubeConfig, opts: TransportOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) {
      throw new Error(`kubeconfig: context "${kc.getCurrentContext()}" names no cluster`);
    }
    this.kubeConfig = kc;
    this.server = cluster.server.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.omitManagedFields = opts.omitManagedFields ?? false;
    this.retryThrottled = Math.max(0, opts.retryThrottled ?? 3);
    this.headers = { Accept: JSON_CT, 'User-Agent': opts.userAgent ?? 'claimkit' };
    if (opts.impersonate) {
      this.headers['Impersonate-User'] = opts.impersonate.user;
      if (opts.impersonate.group) this.headers['Impersonate-Group'] = opts.impersonate.group;
    }
    this.backend =
      (opts.http ?? defaultHttp(kc)) === 'node'
        ? new NodeHttpBackend(kc, this.server)
        : new FetchHttpBackend(kc, this.server);
  }

  describe(req: Pick<HttpRequest, 'what'> & { method: string }): RequestDescription {
    return { method: req.method, what: req.what, server: this.server };
  }

  /** Closes kept-alive connections (a client that is done). */
  close(): void {
    this.backend.close();
  }

  /**
   * The request, sent again while the server answers it throttled (see retryThrottled). Resolves
   * with the last HTTP answer, whatever its status; throws ApiError when no answer came.
   */
  async send(req: HttpRequest, observe?: AttemptObserver): Promise<HttpResponse> {
    let r = await this.attempt(req, observe);
    for (let retry = 0; retry < this.retryThrottled; retry++) {
      const wait = throttleWait(r);
      if (wait === undefined) break;
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      r = await this.attempt(req, observe);
    }
    return r;
  }

  /** One request, no retries, with the per-request timeout (or `timeoutMs`). */
  async sendOnce(req: HttpRequest, timeoutMs = this.timeoutMs): Promise<HttpResponse> {
    try {
      const resp = await this.backend.send(this.prepare(req), { timeoutMs });
      return { status: resp.status, headers: resp.headers, text: await resp.text() };
    } catch (e) {
      throw transportError(e, this.describe(req));
    }
  }

  /**
   * Sends the request and resolves at the response headers (within the per-request timeout),
   * leaving the body to the caller (a watch streams it). `signal` aborts it at any point. Failures
   * are thrown as they come.
   */
  open(req: HttpRequest, signal: AbortSignal): Promise<BackendResponse> {
    return this.backend.send(this.prepare(req), { timeoutMs: this.timeoutMs, signal, stream: true });
  }

  private async attempt(req: HttpRequest, observe: AttemptObserver | undefined): Promise<HttpResponse> {
    const t0 = performance.now();
    let r: HttpResponse;
    try {
      r = await this.sendOnce(req);
    } catch (e) {
      observe?.(0, performance.now() - t0);
      throw e;
    }
    observe?.(r.status, performance.now() - t0);
    return r;
  }

  private prepare(req: HttpRequest): PreparedRequest {
    let query = '';
    for (const [k, v] of Object.entries(req.query ?? {})) {
      if (v !== undefined) query += `${query ? '&' : '?'}${encodeURIComponent(k)}=${encodeURIComponent(v)}`;
    }
    if (req.body === undefined)
      return { method: req.method, pathAndQuery: req.path + query, headers: this.headers };
    return {
      method: req.method,
      pathAndQuery: req.path + query,
      headers: { ...this.headers, 'Content-Type': req.contentType ?? JSON_CT },
      body: JSON.stringify(req.body),
    };
  }
}
