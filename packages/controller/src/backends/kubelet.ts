// The Kubelet capture backend: the ContainerCheckpoint API (KEP-2008),
// POST /checkpoint/{namespace}/{pod}/{container} on the kubelet, reached through the API server's
// node proxy (/api/v1/nodes/{node}/proxy/...; RBAC: nodes/proxy create). The kubelet answers when
// the checkpoint is written: {"items":["/var/lib/kubelet/checkpoints/checkpoint-<pod>_<ns>-<container>-<time>.tar"]},
// so start() runs the checkpoint and the job id is the archive path; poll() reports it Succeeded.
// A non-empty spec.backend.url is used instead of the node proxy as the kubelet's base URL
// (`{nodeName}` expanded), e.g. https://{nodeName}:10250 or a test double.

import {
  ApiError,
  type CaptureBackend,
  type CaptureJobRequest,
  expandBackendUrl,
  type JobState,
} from '@claimkit/core';
import { CHECKPOINT_BUSY } from '../agent/kubelet.ts';

/** Sends a request to the API server (authenticated); path starts with /api/. */
export type ApiServerRequest = (method: 'POST', path: string) => Promise<{ status: number; text: string }>;

export interface KubeletBackendOptions {
  /** Through the API server node proxy (absent: only spec.backend.url works). */
  apiServer?: ApiServerRequest;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

const PREFIX = 'kubelet:';

export function checkpointPath(req: CaptureJobRequest): string {
  const e = encodeURIComponent;
  return `/checkpoint/${e(req.namespace)}/${e(req.pod)}/${e(req.container)}`;
}

/**
 * What a non-2xx answer means. Definite answers (an attempt spent at once, with the kubelet's words
 * as lastError): 403 (the caller may not `create nodes/proxy`), 404 (no such pod or container, or
 * a kubelet without the ContainerCheckpoint feature), and a 500 in which the kubelet says the
 * runtime's checkpoint failed (CRIU or runc refused: it would fail the same way again). Anything
 * else (the node proxy cannot reach the kubelet, a checkpoint of the container still running,
 * 429, other 5xx) may pass and is retried.
 */
export function refusal(where: string, res: { status: number; text: string }): ApiError {
  const body = res.text.trim().slice(0, 600);
  const at = `checkpoint ${where}: HTTP ${res.status}`;
  if (res.status === 403)
    return new ApiError('Forbidden', `${at}: ${body} (the controller needs create on nodes/proxy)`, {
      code: 403,
    });
  if (res.status === 404) {
    const hint = /^404 page not found$/.test(body)
      ? ' (the kubelet does not serve /checkpoint: is its ContainerCheckpoint feature gate on?)'
      : '';
    return new ApiError('NotFound', `${at}: ${body}${hint}`, { code: 404 });
  }
  // An earlier checkpoint of the same container still running (its caller gone, e.g. the kubelet
  // restarted mid-checkpoint): runc finds the container paused for it. It will end: try again.
  // The same, seen by a start that waits on the container's task meanwhile (the runtime's own
  // deadline; DeadlineExceeded is a timeout, not a refusal).
  if (res.status === 500 && CHECKPOINT_BUSY.test(body))
    return new ApiError('Unavailable', `${at}: ${body} (a checkpoint of this container is still running)`, {
      code: 500,
    });
  if (res.status === 500 && /^checkpointing of \S+ failed/.test(body))
    return new ApiError('BadRequest', `${at}: ${body}`, { code: 500 });
  if (res.status === 429) return new ApiError('TooManyRequests', `${at}: ${body}`, { code: 429 });
  if (res.status >= 500) return new ApiError('Unavailable', `${at}: ${body}`, { code: res.status });
  return new ApiError('BadRequest', `${at}: ${body}`, { code: res.status });
}

export class KubeletCaptureBackend implements CaptureBackend {
  private readonly o: KubeletBackendOptions;
  constructor(opts: KubeletBackendOptions = {}) {
    this.o = opts;
  }

  async start(url: string, req: CaptureJobRequest): Promise<{ id: string }> {
    if (!req.node) throw new ApiError('BadRequest', `pod ${req.pod} is not on a node yet`);
    let res: { status: number; text: string };
    const where = url
      ? `${expandBackendUrl(url, req).replace(/\/+$/, '')}${checkpointPath(req)}`
      : `/api/v1/nodes/${encodeURIComponent(req.node)}/proxy${checkpointPath(req)}`;
    try {
      if (url) {
        const r = await (this.o.fetch ?? fetch)(where, {
          method: 'POST',
          signal: AbortSignal.timeout(this.o.timeoutMs ?? 120_000),
        });
        res = { status: r.status, text: await r.text() };
      } else {
        if (!this.o.apiServer) throw new Error('no API server connection for the node proxy');
        res = await this.o.apiServer('POST', where);
      }
    } catch (e) {
      throw new ApiError('Unavailable', `checkpoint ${where}: ${(e as Error).message}`);
    }
    if (res.status < 200 || res.status >= 300) throw refusal(where, res);
    let items: unknown;
    try {
      items = (JSON.parse(res.text) as { items?: unknown }).items;
    } catch {
      throw new ApiError('BadRequest', `checkpoint ${where}: response is not JSON`);
    }
    if (!Array.isArray(items) || typeof items[0] !== 'string' || items[0] === '')
      throw new ApiError('BadRequest', `checkpoint ${where}: response has no items`);
    return { id: `${PREFIX}${req.node}:${items[0]}` };
  }

  async poll(_url: string, id: string): Promise<JobState> {
    if (!id.startsWith(PREFIX)) return { state: 'Failed', error: `not a kubelet checkpoint id: ${id}` };
    const [node, ...path] = id.slice(PREFIX.length).split(':');
    // The same form as the capture agent's refs (agent/ref.ts), without a digest: the archive stays on the node.
    return { state: 'Succeeded', ref: `checkpoint://${node}${path.join(':')}` };
  }
}
