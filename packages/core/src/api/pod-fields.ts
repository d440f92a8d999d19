// The part of a Pod claimkit reads, for a cache that keeps only that (the controller's Pod informer
// holds every pod of every pool: 37,000 pods at issue 22's scale). Audited against core and the
// controller: metadata (all of it but managedFields, which the informer drops), spec.nodeName,
// spec.restartPolicy, the containers' and init containers' names and images (and an init
// container's restartPolicy: a sidecar), the containers' ports (a claim's address), and status
// phase, conditions, containerStatuses, initContainerStatuses, hostIP, podIP and podIPs. Everything else (volumes, tolerations, resources,
// securityContext, the scheduler's and kubelet's defaults) is dropped. Writes to pods are merge
// patches of labels and annotations with a resourceVersion precondition, never a PUT of a cached pod,
// so nothing dropped is ever written back.
import type { Container, Pod, PodSpec, PodStatus } from './types.ts';

// Ports too: a claim's status.address lists the container ports of its pod (pool/pod-address.ts).
const container = (c: Container): Container => ({
  name: c.name,
  image: c.image,
  ...(c.ports !== undefined ? { ports: c.ports } : {}),
});

export function podFieldsRead(p: Pod): Pod {
  const spec: PodSpec = { containers: (p.spec?.containers ?? []).map(container) };
  if (p.spec?.nodeName !== undefined) spec.nodeName = p.spec.nodeName;
  if (p.spec?.restartPolicy !== undefined) spec.restartPolicy = p.spec.restartPolicy;
  const init = p.spec?.initContainers as Container[] | undefined;
  if (init !== undefined)
    spec.initContainers = init.map((c) => ({
      ...container(c),
      ...(c.restartPolicy !== undefined ? { restartPolicy: c.restartPolicy } : {}),
    }));
  const out: Pod = { apiVersion: p.apiVersion, kind: p.kind, metadata: p.metadata, spec };
  if (p.status !== undefined) {
    const status: Record<string, unknown> = {};
    for (const k of STATUS_FIELDS) if (p.status[k] !== undefined) status[k] = p.status[k];
    out.status = status as PodStatus;
  }
  return out;
}

const STATUS_FIELDS = [
  'phase',
  'conditions',
  'containerStatuses',
  'initContainerStatuses',
  'hostIP',
  'podIP',
  'podIPs',
] as const;
