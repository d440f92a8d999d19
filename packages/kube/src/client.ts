// core's Client and Watcher ports over @kubernetes/client-node: its KubeConfig authenticates each
// request (client certificates, tokens, exec plugins, TLS) and its fetch-based HTTP library sends
// it; this file builds the REST paths, bodies and content types and maps every failure to ApiError.
import {
  type AnyObject,
  ApiError,
  type Client,
  type DeleteOptions,
  formatSelector,
  isApiError,
  KIND_INFO,
  type Kind,
  type KindMap,
  type KubeObject,
  type LabelSelector,
  type ListOptions,
  type MergePatch,
  type ObjectKey,
  type ObjectList,
  type PatchOptions,
  type WatchEventType,
  type Watcher,
  type WatchHandlers,
  type WatchOptions,
} from '@claimkit/core';
import {
  type HttpMethod,
  IsomorphicFetchHttpLibrary,
  type KubeConfig,
  RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { httpError, type RequestDescription, transportError } from './errors.ts';

/** Verbs as counted by `onRequest` (status writes are their own verbs, watches are `watch`). */
export type RequestVerb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'updateStatus'
  | 'patchStatus'
  | 'delete';

export interface KubeClientOptions {
  /** Per-request timeout (a watch: until its response headers). Default 30 s. */
  timeoutMs?: number;
  /**
   * Called once per API request when it finishes: HTTP status (0 when no response arrived) and
   * duration; the controller turns it into Prometheus metrics. Must not throw.
   */
  onRequest?: (verb: RequestVerb, kind: Kind, code: number, ms: number) => void;
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
}

const MAX_RETRY_AFTER_SECONDS = 10;

/** core's WatchOptions plus what only a real connection has. */
export interface KubeWatchOptions extends WatchOptions {
  /** End the watch (onClose without an error) when nothing arrived for this long. Default 60 s. */
  inactivityMs?: number;
}

export interface KubeClient extends Client, Watcher {
  readonly kubeConfig: KubeConfig;
  /** The API server URL of the current context. */
  readonly server: string;
  watch<K extends Kind>(kind: K, opts: KubeWatchOptions, handlers: WatchHandlers<KindMap[K]>): () => void;
  /**
   * An authenticated request to any API server path (e.g. the node proxy `/api/v1/nodes/n/proxy/...`):
   * every HTTP answer resolves, a transport failure throws ApiError. Default timeout: the client's.
   */
  raw(method: 'GET' | 'POST', path: string, opts?: { timeoutMs?: number }): Promise<RawResponse>;
}

export interface RawResponse {
  status: number;
  text: string;
}

const JSON_CT = 'application/json';
const MERGE_PATCH_CT = 'application/merge-patch+json';

interface Response {
  status: number;
  headers: Record<string, string>;
  text: string;
}

function selectorString(sel: LabelSelector | string | undefined): string | undefined {
  if (sel === undefined) return undefined;
  const s = typeof sel === 'string' ? sel : formatSelector(sel);
  return s === '' ? undefined : s;
}

function fieldSelectorString(fs: Record<string, string> | undefined): string | undefined {
  if (!fs) return undefined;
  const parts = Object.entries(fs).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(',') : undefined;
}

/** `/api/v1` or `/apis/<group>/<version>`. */
function groupPrefix(kind: Kind): string {
  const apiVersion = KIND_INFO[kind]?.apiVersion;
  if (!apiVersion) throw httpError(400, { message: `unknown kind ${String(kind)}` });
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

function collectionPath(kind: Kind, namespace: string | undefined): string {
  const plural = KIND_INFO[kind].plural;
  return namespace
    ? `${groupPrefix(kind)}/namespaces/${encodeURIComponent(namespace)}/${plural}`
    : `${groupPrefix(kind)}/${plural}`;
}

function objectPath(kind: Kind, key: ObjectKey, sub?: 'status'): string {
  if (!key.name) throw httpError(400, { message: `${KIND_INFO[kind].plural}: a name is required` });
  const p = `${collectionPath(kind, key.namespace)}/${encodeURIComponent(key.name)}`;
  return sub ? `${p}/${sub}` : p;
}

function withTypeMeta<T>(kind: Kind, o: T): T {
  const obj = o as unknown as KubeObject;
  if (obj && typeof obj === 'object') {
    obj.apiVersion = KIND_INFO[kind].apiVersion;
    obj.kind = kind;
  }
  return o;
}

function keyText(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

class KubeClientImpl implements KubeClient {
  readonly kubeConfig: KubeConfig;
  readonly server: string;
  private readonly http = new IsomorphicFetchHttpLibrary();
  private readonly timeoutMs: number;
  private readonly retryThrottled: number;
  private readonly impersonate: { user: string; group?: string } | undefined;
  private readonly onRequest: KubeClientOptions['onRequest'];
  private readonly userAgent: string;
  private dispatcher: ReturnType<RequestContext['getDispatcher']>;

  constructor(kc: KubeConfig, opts: KubeClientOptions) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) {
      throw new Error(`kubeconfig: context "${kc.getCurrentContext()}" names no cluster`);
    }
    this.kubeConfig = kc;
    this.server = cluster.server.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.retryThrottled = Math.max(0, opts.retryThrottled ?? 3);
    this.impersonate = opts.impersonate;
    this.onRequest = opts.onRequest;
    this.userAgent = opts.userAgent ?? 'claimkit';
  }

  private report(verb: RequestVerb, kind: Kind, code: number, t0: number): void {
    if (!this.onRequest) return;
    try {
      this.onRequest(verb, kind, code, performance.now() - t0);
    } catch {
      // metrics never break a request
    }
  }

  private async context(
    method: string,
    path: string,
    query: Record<string, string | undefined>,
    body: unknown,
    contentType: string | undefined,
    signal: AbortSignal,
  ): Promise<RequestContext> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    const ctx = new RequestContext(url.toString(), method as (typeof HttpMethod)[keyof typeof HttpMethod]);
    ctx.setHeaderParam('Accept', JSON_CT);
    ctx.setHeaderParam('User-Agent', this.userAgent);
    if (this.impersonate) {
      ctx.setHeaderParam('Impersonate-User', this.impersonate.user);
      if (this.impersonate.group) ctx.setHeaderParam('Impersonate-Group', this.impersonate.group);
    }
    if (body !== undefined) {
      ctx.setHeaderParam('Content-Type', contentType ?? JSON_CT);
      ctx.setBody(JSON.stringify(body));
    }
    ctx.setSignal(signal);
    await this.kubeConfig.applySecurityAuthentication(ctx);
    // client-node builds a new connection pool (an undici Agent) for every request it authenticates:
    // keep the first one, so requests reuse kept-alive TLS connections instead of a handshake each.
    const dispatcher = ctx.getDispatcher();
    if (dispatcher !== undefined) {
      this.dispatcher ??= dispatcher;
      ctx.setDispatcher(this.dispatcher);
    }
    return ctx;
  }

  /** One request with the per-request timeout; resolves with any HTTP answer, throws ApiError on transport failure. */
  private async send(
    verb: RequestVerb,
    kind: Kind,
    method: string,
    path: string,
    what: string,
    opts: { query?: Record<string, string | undefined>; body?: unknown; contentType?: string } = {},
  ): Promise<Response> {
    const desc: RequestDescription = { method, what, server: this.server };
    const t0 = performance.now();
    const signal = AbortSignal.timeout(this.timeoutMs);
    let resp: ResponseContext;
    let text: string;
    try {
      const ctx = await this.context(method, path, opts.query ?? {}, opts.body, opts.contentType, signal);
      resp = await this.http.send(ctx).toPromise();
      text = await resp.body.text();
    } catch (e) {
      this.report(verb, kind, 0, t0);
      throw transportError(e, desc);
    }
    this.report(verb, kind, resp.httpStatusCode, t0);
    return { status: resp.httpStatusCode, headers: resp.headers, text };
  }

  private async call<T>(
    verb: RequestVerb,
    kind: Kind,
    method: string,
    path: string,
    what: string,
    opts: { query?: Record<string, string | undefined>; body?: unknown; contentType?: string } = {},
  ): Promise<T> {
    let r = await this.send(verb, kind, method, path, what, opts);
    for (let retry = 0; retry < this.retryThrottled; retry++) {
      const wait = Number(r.headers['retry-after']);
      const throttled = r.status === 429 || (r.status >= 500 && r.headers['retry-after'] !== undefined);
      if (!throttled || !Number.isFinite(wait) || wait < 0) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, MAX_RETRY_AFTER_SECONDS) * 1000));
      r = await this.send(verb, kind, method, path, what, opts);
    }
    if (r.status < 200 || r.status >= 300) {
      throw httpError(r.status, r.text, { method, what, server: this.server }, r.headers['retry-after']);
    }
    try {
      return JSON.parse(r.text) as T;
    } catch {
      throw httpError(502, `unparseable response: ${r.text.slice(0, 200)}`, {
        method,
        what,
        server: this.server,
      });
    }
  }

  async raw(method: 'GET' | 'POST', path: string, opts: { timeoutMs?: number } = {}): Promise<RawResponse> {
    const desc: RequestDescription = { method, what: path, server: this.server };
    try {
      const signal = AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs);
      const ctx = await this.context(method, path, {}, undefined, undefined, signal);
      const resp = await this.http.send(ctx).toPromise();
      return { status: resp.httpStatusCode, text: await resp.body.text() };
    } catch (e) {
      throw transportError(e, desc);
    }
  }

  // ---------------- Reader ----------------

  async get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]> {
    const o = await this.call<KindMap[K]>(
      'get',
      kind,
      'GET',
      objectPath(kind, key),
      `${KIND_INFO[kind].plural} ${keyText(key)}`,
    );
    return withTypeMeta(kind, o);
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    const r = await this.call<{
      items?: KindMap[K][];
      metadata?: { resourceVersion?: string; continue?: string };
    }>(
      'list',
      kind,
      'GET',
      collectionPath(kind, opts.namespace),
      `${KIND_INFO[kind].plural}${opts.namespace ? ` in ${opts.namespace}` : ''}`,
      {
        query: {
          labelSelector: selectorString(opts.labelSelector),
          fieldSelector: fieldSelectorString(opts.fieldSelector),
          limit: opts.limit ? String(opts.limit) : undefined,
          continue: opts.continue || undefined,
        },
      },
    );
    // List items come without apiVersion/kind.
    const out: ObjectList<KindMap[K]> = {
      items: (r.items ?? []).map((o) => withTypeMeta(kind, o)),
      resourceVersion: r.metadata?.resourceVersion ?? '',
    };
    if (r.metadata?.continue) out.continue = r.metadata.continue;
    return out;
  }

  // ---------------- Writer ----------------

  async create<T extends AnyObject>(obj: T): Promise<T> {
    const kind = obj.kind as Kind;
    const ns = obj.metadata.namespace ?? '';
    const body = withTypeMeta(kind, { ...obj });
    const name = obj.metadata.name || `${obj.metadata.generateName ?? ''}*`;
    const o = await this.call<T>(
      'create',
      kind,
      'POST',
      collectionPath(kind, ns),
      `${KIND_INFO[kind]?.plural ?? kind} ${keyText({ namespace: ns, name })}`,
      { body },
    );
    return withTypeMeta(kind, o);
  }

  private async put<T extends AnyObject>(obj: T, verb: 'update' | 'updateStatus'): Promise<T> {
    const kind = obj.kind as Kind;
    const key = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name };
    const sub = verb === 'updateStatus' && KIND_INFO[kind]?.hasStatusSubresource ? 'status' : undefined;
    const o = await this.call<T>(
      verb,
      kind,
      'PUT',
      objectPath(kind, key, sub),
      `${KIND_INFO[kind].plural} ${keyText(key)}${sub ? '/status' : ''}`,
      { body: withTypeMeta(kind, { ...obj }) },
    );
    return withTypeMeta(kind, o);
  }

  update<T extends AnyObject>(obj: T): Promise<T> {
    return this.put(obj, 'update');
  }

  updateStatus<T extends AnyObject>(obj: T): Promise<T> {
    return this.put(obj, 'updateStatus');
  }

  private async mergePatch<K extends Kind>(
    verb: 'patch' | 'patchStatus',
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts: PatchOptions = {},
  ): Promise<KindMap[K]> {
    // The API server fences a merge patch on metadata.resourceVersion (409 Conflict when stale) and
    // rejects a metadata.uid that differs from the stored one (409 Conflict: "Precondition failed").
    let body = patch;
    if (opts.resourceVersion !== undefined || opts.uid !== undefined) {
      const meta = { ...((patch.metadata as Record<string, unknown> | undefined) ?? {}) };
      if (opts.resourceVersion !== undefined) meta.resourceVersion = opts.resourceVersion;
      if (opts.uid !== undefined) meta.uid = opts.uid;
      body = { ...patch, metadata: meta };
    }
    const sub = verb === 'patchStatus' && KIND_INFO[kind]?.hasStatusSubresource ? 'status' : undefined;
    try {
      const o = await this.call<KindMap[K]>(
        verb,
        kind,
        'PATCH',
        objectPath(kind, key, sub),
        `${KIND_INFO[kind].plural} ${keyText(key)}${sub ? '/status' : ''}`,
        { body, contentType: MERGE_PATCH_CT },
      );
      return withTypeMeta(kind, o);
    } catch (e) {
      // A merge patch with another metadata.uid is answered 422 "metadata.uid: field is immutable";
      // the port promises Conflict (as for update and delete preconditions): the object we meant is gone.
      if (
        opts.uid !== undefined &&
        isApiError(e, 'Invalid') &&
        e.causes.some((c) => c.field === 'metadata.uid')
      ) {
        throw new ApiError(
          'Conflict',
          `Precondition failed: UID in precondition: ${opts.uid} (${e.message})`,
          {
            code: 409,
            causes: e.causes,
          },
        );
      }
      throw e;
    }
  }

  patch<K extends Kind>(
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts?: PatchOptions,
  ): Promise<KindMap[K]> {
    return this.mergePatch('patch', kind, key, patch, opts);
  }

  patchStatus<K extends Kind>(
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts?: PatchOptions,
  ): Promise<KindMap[K]> {
    return this.mergePatch('patchStatus', kind, key, patch, opts);
  }

  async delete<K extends Kind>(
    kind: K,
    key: ObjectKey,
    opts: DeleteOptions = {},
  ): Promise<KindMap[K] | undefined> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.preconditions) body.preconditions = opts.preconditions;
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    const r = await this.call<KubeObject & { status?: unknown }>(
      'delete',
      kind,
      'DELETE',
      objectPath(kind, key),
      `${KIND_INFO[kind].plural} ${keyText(key)}`,
      { body },
    );
    // The server answers a Status when the object is gone, else the object: kept (finalizers, a
    // graceful pod deletion) when it has a deletionTimestamp and something still holds it.
    if (!r || r.kind === 'Status') return undefined;
    const m = r.metadata;
    const kept =
      !!m?.deletionTimestamp && ((m.finalizers?.length ?? 0) > 0 || (m.deletionGracePeriodSeconds ?? 0) > 0);
    return kept ? withTypeMeta(kind, r as unknown as KindMap[K]) : undefined;
  }

  // ---------------- Watcher ----------------

  watch<K extends Kind>(kind: K, opts: KubeWatchOptions, handlers: WatchHandlers<KindMap[K]>): () => void {
    const abort = new AbortController();
    let stopped = false;
    void this.runWatch(kind, opts, handlers, abort, () => stopped);
    return () => {
      stopped = true;
      abort.abort();
    };
  }

  private async runWatch<K extends Kind>(
    kind: K,
    opts: KubeWatchOptions,
    handlers: WatchHandlers<KindMap[K]>,
    abort: AbortController,
    isStopped: () => boolean,
  ): Promise<void> {
    const what = `${KIND_INFO[kind].plural}${opts.namespace ? ` in ${opts.namespace}` : ''}`;
    const desc: RequestDescription = { method: 'WATCH', what, server: this.server };
    const inactivityMs = opts.inactivityMs ?? 60_000;
    let closed = false;
    // Exactly once, and never after stop(): the caller who stopped the watch knows it ended.
    const close = (err?: ApiError) => {
      if (closed || isStopped()) return;
      closed = true;
      try {
        handlers.onClose?.(err);
      } catch {
        // handler errors are the caller's
      }
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    let idle = false;
    const arm = (ms: number) => {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => {
        idle = true;
        abort.abort();
      }, ms);
      timer.unref?.();
    };
    const t0 = performance.now();
    let reported = false;
    try {
      arm(this.timeoutMs);
      const query: Record<string, string | undefined> = {
        watch: 'true',
        labelSelector: selectorString(opts.labelSelector),
        fieldSelector: fieldSelectorString(opts.fieldSelector),
        resourceVersion: opts.resourceVersion || undefined,
        allowWatchBookmarks: opts.allowWatchBookmarks ? 'true' : undefined,
        timeoutSeconds: opts.timeoutSeconds !== undefined ? String(opts.timeoutSeconds) : undefined,
      };
      const ctx = await this.context(
        'GET',
        collectionPath(kind, opts.namespace),
        query,
        undefined,
        undefined,
        abort.signal,
      );
      const resp = await this.http.send(ctx).toPromise();
      this.report('watch', kind, resp.httpStatusCode, t0);
      reported = true;
      if (resp.httpStatusCode !== 200) {
        const text = await resp.body.text();
        close(httpError(resp.httpStatusCode, text, desc, resp.headers['retry-after']));
        return;
      }
      const stream = resp.body.stream();
      if (!stream) {
        close();
        return;
      }
      arm(inactivityMs);
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm(inactivityMs);
        buf += decoder.decode(value, { stream: true });
        let nl = buf.indexOf('\n');
        while (nl >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          nl = buf.indexOf('\n');
          if (line === '') continue;
          let ev: { type?: string; object?: unknown };
          try {
            ev = JSON.parse(line);
          } catch {
            continue;
          }
          if (isStopped()) return;
          if (ev.type === 'ERROR') {
            close(httpError(0, ev.object, desc));
            abort.abort();
            return;
          }
          if (ev.type === 'BOOKMARK') {
            const rv = (ev.object as KubeObject | undefined)?.metadata?.resourceVersion;
            if (rv) handlers.onBookmark?.(rv);
            continue;
          }
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') {
            handlers.onEvent({
              type: ev.type as WatchEventType,
              object: withTypeMeta(kind, ev.object as KindMap[K]),
            });
          }
        }
      }
      close();
    } catch (e) {
      if (!reported) this.report('watch', kind, 0, t0);
      // Our own abort (stop or inactivity) is a normal end: resume from the last resourceVersion.
      if (isStopped() || idle) close();
      else close(transportError(e, desc));
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      if (!abort.signal.aborted) abort.abort();
      close();
    }
  }
}

/** core's Client + Watcher (and the informers' watch stream) over a KubeConfig's current context. */
export function createKubeClient(kc: KubeConfig, opts: KubeClientOptions = {}): KubeClient {
  return new KubeClientImpl(kc, opts);
}
