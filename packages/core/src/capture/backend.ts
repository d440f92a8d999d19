// The capture backend port. `External` has none (the holder completes itself); `Http` and
// `Kubelet` are implemented by runtimes; the simulator has ones that succeed, fail or hang.

export interface CaptureJobRequest {
  namespace: string;
  capture: string;
  pod: string;
  uid: string;
  container: string;
  node: string;
  /** The node's IP as the pod reports it (status.hostIP), for `{nodeIP}` in backend URLs. */
  nodeIP?: string;
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

/**
 * `{nodeName}` and friends in backend URLs. `{nodeIP}` (the pod's status.hostIP) reaches a
 * node agent on its hostPort where node names do not resolve (no DNS for nodes, as on most
 * clusters); it stays unexpanded while the pod reports no host IP.
 */
export function expandBackendUrl(template: string, req: CaptureJobRequest): string {
  return template
    .replaceAll('{nodeName}', req.node)
    .replaceAll('{nodeIP}', req.nodeIP || '{nodeIP}')
    .replaceAll('{namespace}', req.namespace)
    .replaceAll('{pod}', req.pod)
    .replaceAll('{capture}', req.capture);
}
