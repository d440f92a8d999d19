// What the controller's pod cache keeps of a pod (api/pod-fields.ts): the fields claimkit reads,
// nothing of what the API server, the scheduler and the kubelet add for themselves.
import { describe, expect, test } from 'vitest';
import { podFieldsRead } from './pod-fields.ts';
import type { Pod } from './types.ts';

/** A pod as a kubelet-run cluster returns it (trimmed to what matters here). */
const served: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-abc',
    namespace: 'default',
    uid: 'u1',
    resourceVersion: '42',
    labels: { 'claimkit.dev/pool': 'web', 'claimkit.dev/state': 'Idle' },
    annotations: { 'claimkit.dev/claimed-by-uid': 'c1' },
    ownerReferences: [{ apiVersion: 'claimkit.dev/v1alpha1', kind: 'PodPool', name: 'web', uid: 'p1' }],
    deletionTimestamp: '2026-01-01T00:00:00Z',
  },
  spec: {
    containers: [
      {
        name: 'main',
        image: 'app:1',
        ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
        resources: {},
        volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets' }],
        terminationMessagePath: '/dev/termination-log',
      },
    ],
    initContainers: [{ name: 'proxy', image: 'proxy:1', restartPolicy: 'Always', env: [] }],
    nodeName: 'node-1',
    restartPolicy: 'Always',
    volumes: [{ name: 'kube-api-access', projected: { sources: [] } }],
    tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }],
    schedulerName: 'default-scheduler',
    securityContext: {},
  },
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True' }],
    containerStatuses: [{ name: 'main', restartCount: 0, containerID: 'containerd://1' }],
    initContainerStatuses: [{ name: 'proxy', restartCount: 0 }],
    hostIP: '10.0.0.2',
    hostIPs: [{ ip: '10.0.0.2' }],
    podIP: '10.1.0.5',
    podIPs: [{ ip: '10.1.0.5' }],
    qosClass: 'BestEffort',
    startTime: '2026-01-01T00:00:00Z',
  },
};

describe('podFieldsRead', () => {
  test('keeps metadata, node, restart policy, container names, images and ports, and the status claimkit reads', () => {
    expect(podFieldsRead(served)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: served.metadata,
      spec: {
        containers: [
          { name: 'main', image: 'app:1', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] },
        ],
        initContainers: [{ name: 'proxy', image: 'proxy:1', restartPolicy: 'Always' }],
        nodeName: 'node-1',
        restartPolicy: 'Always',
      },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [{ name: 'main', restartCount: 0, containerID: 'containerd://1' }],
        initContainerStatuses: [{ name: 'proxy', restartCount: 0 }],
        hostIP: '10.0.0.2',
        podIP: '10.1.0.5',
        podIPs: [{ ip: '10.1.0.5' }],
      },
    });
  });

  test('a pod without status or node stays without them', () => {
    const pending: Pod = { ...served, spec: { containers: [{ name: 'main', image: 'app:1' }] } };
    delete pending.status;
    expect(podFieldsRead(pending)).toEqual({
      ...pending,
      spec: { containers: [{ name: 'main', image: 'app:1' }] },
    });
  });
});
