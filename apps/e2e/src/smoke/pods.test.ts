import { describe, expect, it } from 'vitest';
import { isNotFound, type V1Pod, waitFor } from '../harness/index.ts';
import { e2eClients, e2eCluster, useTestNamespace } from '../harness/vitest.ts';

const FINALIZER = 'claimkit.dev/e2e-hold';

function podBody(name: string, finalizers?: string[], terminationGracePeriodSeconds = 5): V1Pod {
  return {
    metadata: { name, ...(finalizers ? { finalizers } : {}) },
    spec: {
      // pause runs for real on kind; on the local provider kwok only plays the pod's lifecycle.
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
      terminationGracePeriodSeconds,
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

  it('a pod deleted at once and re-created under its name stays: the new pod becomes Ready', async () => {
    // A StatefulSet-like replacement (seed A replaces its holder this way). On the local provider kwok
    // used to remove the new pod now and then: a delete it had queued for the old pod, by name
    // (kwok-stages/pod-delete.yaml now leaves grace-0 deletions to the API server). That race is rare
    // and timing-bound: this sweep did not reproduce it on demand, a kubectl loop did (2 of 40
    // cycles before, 0 of 100 after); the test holds the behaviour seed A relies on, on any cluster.
    const cycles = e2eCluster().provider === 'local' ? 30 : 4;
    const name = 'again';
    for (let i = 0; i < cycles; i++) {
      // The new pod is lost when it is created after kwok queued its 100 ms delete for the old one
      // and seen by kwok after that fired: sweep the gap between "gone" and the new create over it.
      if (i > 0) await new Promise((r) => setTimeout(r, (i * 10) % 160));
      const created = await core().createNamespacedPod({
        namespace: ns.name,
        body: podBody(name, undefined, 0),
      });
      const ready = await waitFor(
        `cycle ${i}: pod ${name} (uid ${created.metadata?.uid}) Ready`,
        async () => {
          const p = await core().readNamespacedPod({ name, namespace: ns.name });
          if (p.metadata?.uid !== created.metadata?.uid)
            throw new Error(`pod ${name} was replaced by uid ${p.metadata?.uid}`);
          return isReady(p) ? p : undefined;
        },
        {
          timeoutMs: 30_000,
          intervalMs: 20,
          explain: async () => {
            const p = await core()
              .readNamespacedPod({ name, namespace: ns.name })
              .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
            return p
              ? `uid ${p.metadata?.uid} phase ${p.status?.phase} node ${p.spec?.nodeName ?? '(none)'}`
              : `pod ${name} is gone: something deleted the new pod`;
          },
        },
      );
      expect(ready.metadata?.uid).toBe(created.metadata?.uid);
      await core().deleteNamespacedPod({ name, namespace: ns.name, gracePeriodSeconds: 0 });
      await waitFor(
        `cycle ${i}: pod ${name} gone`,
        async () => {
          try {
            const p = await core().readNamespacedPod({ name, namespace: ns.name });
            return p.metadata?.uid !== created.metadata?.uid;
          } catch (e) {
            if (isNotFound(e)) return true;
            throw e;
          }
        },
        { timeoutMs: 30_000, intervalMs: 20 },
      );
    }
  });
});
