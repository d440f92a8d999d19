// The Http capture backend (DESIGN.md): POST {url} with {namespace,pod,uid,container,node,capture,
// token} -> {id}; GET {url}/{id} -> {state: Running|Succeeded|Failed, ref?, error?}. `{nodeName}`
// and friends in the URL are expanded per job. Every request has a timeout, so a hung agent never
// holds a worker; polling itself is paced by the reconciler's requeueAfter.
import { readFile } from 'node:fs/promises';
import {
  ApiError,
  type CaptureBackend,
  type CaptureJobRequest,
  expandBackendUrl,
  type JobState,
} from '@claimkit/core';

export interface HttpBackendOptions {
  timeoutMs?: number;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
  /**
   * A token sent as `Authorization: Bearer` (re-read on every request: a projected ServiceAccount
   * token for audience claimkit-capture-agent rotates), which agents started with
   * --allowed-callers review.
   */
  tokenFile?: string;
}

export class HttpCaptureBackend implements CaptureBackend {
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;
  private readonly headers: Record<string, string>;
  private readonly tokenFile: string | undefined;

  constructor(opts: HttpBackendOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.fetch = opts.fetch ?? globalThis.fetch;
    this.headers = opts.headers ?? {};
    this.tokenFile = opts.tokenFile;
  }

  async start(url: string, req: CaptureJobRequest): Promise<{ id: string }> {
    const target = expandBackendUrl(url, req);
    if (target.includes('{nodeIP}'))
      throw new ApiError('Unavailable', `capture agent ${url}: pod ${req.pod} reports no host IP yet`);
    const body = await this.call('POST', target, {
      namespace: req.namespace,
      pod: req.pod,
      uid: req.uid,
      container: req.container,
      node: req.node,
      capture: req.capture,
      token: req.token,
    });
    const id = (body as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string' || id === '')
      throw new ApiError('BadRequest', `capture agent ${target}: response has no job id`);
    return { id };
  }

  async poll(url: string, id: string, req: CaptureJobRequest): Promise<JobState> {
    const target = `${expandBackendUrl(url, req).replace(/\/+$/, '')}/${encodeURIComponent(id)}`;
    const body = (await this.call('GET', target)) as { state?: unknown; ref?: unknown; error?: unknown };
    if (body?.state === 'Succeeded') {
      if (typeof body.ref !== 'string' || body.ref === '')
        return { state: 'Failed', error: `capture agent: job ${id} succeeded without a ref` };
      return { state: 'Succeeded', ref: body.ref };
    }
    if (body?.state === 'Failed') return { state: 'Failed', error: String(body.error ?? 'capture failed') };
    if (body?.state === 'Running') return { state: 'Running' };
    throw new ApiError(
      'BadRequest',
      `capture agent ${target}: unknown job state ${JSON.stringify(body?.state)}`,
    );
  }

  private async call(method: 'GET' | 'POST', url: string, body?: unknown): Promise<unknown> {
    let auth: Record<string, string> = {};
    if (this.tokenFile) {
      try {
        auth = { authorization: `Bearer ${(await readFile(this.tokenFile, 'utf8')).trim()}` };
      } catch (e) {
        throw new ApiError('Unavailable', `capture agent token ${this.tokenFile}: ${(e as Error).message}`);
      }
    }
    let res: Response;
    try {
      res = await this.fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...this.headers,
          ...auth,
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const timedOut = (e as Error)?.name === 'TimeoutError';
      throw new ApiError(
        timedOut ? 'Timeout' : 'Unavailable',
        `capture agent ${method} ${url}: ${timedOut ? `no answer in ${this.timeoutMs} ms` : (((e as Error)?.cause as Error)?.message ?? (e as Error).message)}`,
      );
    }
    const text = await res.text();
    if (!res.ok) {
      let msg = text.slice(0, 300);
      try {
        msg = (JSON.parse(text) as { error?: string }).error ?? msg;
      } catch {
        // not JSON
      }
      const reason =
        res.status === 409
          ? 'Conflict'
          : res.status === 401 || res.status === 403
            ? 'Forbidden'
            : res.status === 404
              ? 'NotFound'
              : res.status >= 500
                ? 'Unavailable'
                : 'BadRequest';
      throw new ApiError(reason, `capture agent ${method} ${url}: HTTP ${res.status}: ${msg}`, {
        code: res.status,
      });
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiError('BadRequest', `capture agent ${method} ${url}: response is not JSON`);
    }
  }
}
