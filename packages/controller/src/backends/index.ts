// Picks the backend by the Capture's spec.backend.type (the port gets only url and job request).
import type { CaptureBackend, CaptureJobRequest, JobState, Reader } from '@claimkit/core';
import { ApiError } from '@claimkit/core';

export { HttpCaptureBackend } from './http.ts';
export { KubeletCaptureBackend } from './kubelet.ts';

export class DispatchingBackend implements CaptureBackend {
  private readonly cache: Reader;
  private readonly byType: Partial<Record<'Http' | 'Kubelet', CaptureBackend>>;
  constructor(cache: Reader, byType: Partial<Record<'Http' | 'Kubelet', CaptureBackend>>) {
    this.cache = cache;
    this.byType = byType;
  }

  private async pick(req: CaptureJobRequest): Promise<CaptureBackend> {
    const c = await this.cache.get('Capture', { namespace: req.namespace, name: req.capture });
    const t = c.spec.backend.type;
    const b = t === 'Http' || t === 'Kubelet' ? this.byType[t] : undefined;
    if (!b) throw new ApiError('BadRequest', `no ${t} capture backend configured`);
    return b;
  }

  async start(url: string, req: CaptureJobRequest): Promise<{ id: string }> {
    return (await this.pick(req)).start(url, req);
  }

  async poll(url: string, id: string, req: CaptureJobRequest): Promise<JobState> {
    return (await this.pick(req)).poll(url, id, req);
  }
}
