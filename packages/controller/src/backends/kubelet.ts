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
    if (res.status < 200 || res.status >= 300) {
      const reason = res.status === 403 ? 'Forbidden' : res.status >= 500 ? 'Unavailable' : 'BadRequest';
      throw new ApiError(reason, `checkpoint ${where}: HTTP ${res.status}: ${res.text.slice(0, 300)}`, {
        code: res.status,
      });
    }
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
    return { state: 'Succeeded', ref: `checkpoint://${id.slice(PREFIX.length)}` };
  }
}
