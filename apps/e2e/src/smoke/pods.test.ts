import { describe, expect, it } from 'vitest';
import { isNotFound, type V1Pod, waitFor } from '../harness/index.ts';
import { e2eClients, e2eCluster, useTestNamespace } from '../harness/vitest.ts';

const FINALIZER = 'claimkit.dev/e2e-hold';

function podBody(name: string, finalizers?: string[]): V1Pod {
  return {
    metadata: { name, ...(finalizers ? { finalizers } : {}) },
    spec: {
      // pause runs for real on kind; on the local provider kwok only plays the pod's lifecycle.
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
      terminationGracePeriodSeconds: 5,
    },
  };
}

const isReady = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

describe('pods on (fake) nodes', () => {
  const ns = useTestNamespace('smoke-pods');
  const core = () => e2eClients().core;

  const waitRunningReady = (name: string) =>
    waitFor(
      `pod ${name} Running and Ready`,
      async () => {
        const p = await core().readNamespacedPod({ name, namespace: ns.name });
        return p.status?.phase === 'Running' && isReady(p) ? p : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );

  const waitGone = (name: string) =>
    waitFor(
      `pod ${name} to be gone`,
      async () => {
        try {
          await core().readNamespacedPod({ name, namespace: ns.name });
          return false;
        } catch (e) {
          if (isNotFound(e)) return true;
          throw e;
        }
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );

  it('a pod is scheduled onto a node and becomes Running and Ready', async () => {
    await core().createNamespacedPod({ namespace: ns.name, body: podBody('ready') });
    const pod = await waitRunningReady('ready');
    expect(pod.spec?.nodeName).toBeTruthy();
    if (e2eCluster().provider === 'local') expect(pod.spec?.nodeName).toMatch(/^kwok-node-\d+$/);
    expect(pod.status?.podIP).toBeTruthy();
    expect(pod.status?.containerStatuses?.[0]?.state?.running).toBeTruthy();
  });

  it('deleting a pod completes: the node acknowledges and the object disappears', async () => {
    await core().createNamespacedPod({ namespace: ns.name, body: podBody('doomed') });
    await waitRunningReady('doomed');
    await core().deleteNamespacedPod({ name: 'doomed', namespace: ns.name });
    await waitGone('doomed');
  });

  it('a pod with a finalizer stays Terminating until the finalizer is removed', async () => {
    await core().createNamespacedPod({ namespace: ns.name, body: podBody('held', [FINALIZER]) });
    await waitRunningReady('held');
    await core().deleteNamespacedPod({ name: 'held', namespace: ns.name });

    // Terminating: deletionTimestamp set, object still there, finalizer intact...
    const terminating = await core().readNamespacedPod({ name: 'held', namespace: ns.name });
    expect(terminating.metadata?.deletionTimestamp).toBeTruthy();
    expect(terminating.metadata?.finalizers).toEqual([FINALIZER]);
    // ...and it stays so while the node has long finished with it (kwok's delete stage runs after
    // 100 ms; a kubelet stops pause in well under the 5 s grace period).
    const until = Date.now() + 7_000;
    while (Date.now() < until) {
      const p = await core().readNamespacedPod({ name: 'held', namespace: ns.name });
      expect(p.metadata?.finalizers).toEqual([FINALIZER]);
      await new Promise((r) => setTimeout(r, 500));
    }

    // Dropping the finalizer lets the deletion finish.
    await core().patchNamespacedPod({
      name: 'held',
      namespace: ns.name,
      body: [
        { op: 'test', path: '/metadata/finalizers', value: [FINALIZER] },
        { op: 'remove', path: '/metadata/finalizers' },
      ],
    });
    await waitGone('held');
  });
});
