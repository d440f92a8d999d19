// The capture backend port. `External` has none (the holder completes itself); `Http` and
// `Kubelet` are implemented by runtimes; the simulator has ones that succeed, fail or hang.

export interface CaptureJobRequest {
  namespace: string;
  capture: string;
  pod: string;
  uid: string;
  container: string;
  node: string;
  token: number;
}

export type JobState =
  | { state: 'Running' }
  | { state: 'Succeeded'; ref: string }
  | { state: 'Failed'; error: string };

export interface CaptureBackend {
  /** Starts (or, for the same capture and token, finds) a job; returns its id. */
  start(url: string, req: CaptureJobRequest): Promise<{ id: string }>;
  poll(url: string, id: string, req: CaptureJobRequest): Promise<JobState>;
}

/** `{nodeName}` and friends in backend URLs. */
export function expandBackendUrl(template: string, req: CaptureJobRequest): string {
  return template
    .replaceAll('{nodeName}', req.node)
    .replaceAll('{namespace}', req.namespace)
    .replaceAll('{pod}', req.pod)
    .replaceAll('{capture}', req.capture);
}
