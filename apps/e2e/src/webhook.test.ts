// The admission webhook on the real API server: served over TLS from this process on 127.0.0.1,
// registered by URL with its caBundle, limited to this file's namespace (and removed afterwards, so
// a failurePolicy: Fail webhook never outlives the suite). The admin identity plays the controller.
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_SHARD,
  API_VERSION,
  GROUP,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  VERSION,
} from '@claimkit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureStatus, makeClientsAs, type V1Pod, waitFor } from './harness/index.ts';
import { apiMessage } from './harness/kube.ts';
import { testPool } from './harness/objects.ts';
import { e2eClients, e2eCluster, useTestNamespace } from './harness/vitest.ts';
import { type InstalledWebhook, installWebhook } from './harness/webhook.ts';

const ADMIN_USER = 'claimkit-e2e-admin'; // the harness's cluster-admin client certificate
const MALLORY = 'mallory@example.invalid';
const local = e2eCluster().provider === 'local';

async function denial(p: Promise<unknown>): Promise<{ code: number | undefined; message: string }> {
  try {
    await p;
  } catch (e) {
    return { code: await failureStatus(Promise.reject(e)), message: apiMessage(e) };
  }
  throw new Error('expected the API server to reject the write');
}

// The webhook can only be reached from an API server on this machine (the local provider).
describe.skipIf(!local)('admission webhook on the API server (registered by URL)', () => {
  const ns = useTestNamespace('webhook');
  let webhook: InstalledWebhook | undefined;
  const custom = () => e2eClients().custom;

  beforeAll(async () => {
    webhook = await installWebhook({
      kubeconfigPath: e2eCluster().kubeconfigPath,
      namespace: ns.name,
      controllerUsers: [ADMIN_USER],
      probe: () =>
        e2eClients().core.createNamespacedPod({
          namespace: ns.name,
          dryRun: 'All',
          body: poolPod('probe', 'NoSuchState'),
        }),
    });
  }, 120_000);

  afterAll(async () => {
    await webhook?.stop();
  });

  function poolPod(name: string, state: string, claim?: { name: string; uid: string }): V1Pod {
    return {
      metadata: {
        name,
        labels: {
          [LABEL_POOL]: 'web',
          [LABEL_STATE]: state,
          ...(claim ? { [LABEL_CLAIMED_BY]: claim.name } : {}),
        },
        annotations: claim ? { [ANNOTATION_CLAIMED_BY_UID]: claim.uid } : {},
      },
      spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
    };
  }

  /** Read-modify-replace, retried on 409 (kwok and the scheduler write the pod too). */
  async function updatePod(name: string, mutate: (p: V1Pod) => void): Promise<V1Pod> {
    const core = e2eClients().core;
    for (let i = 0; ; i++) {
      const pod = await core.readNamespacedPod({ name, namespace: ns.name });
      mutate(pod);
      try {
        return await core.replaceNamespacedPod({ name, namespace: ns.name, body: pod });
      } catch (e) {
        if (i < 20 && (await failureStatus(Promise.reject(e))) === 409) continue;
        throw e;
      }
    }
  }

  it('rejects a direct claimed-by relabel from one claim to another; allows it in two steps', async () => {
    const core = e2eClients().core;
    await core.createNamespacedPod({
      namespace: ns.name,
      body: poolPod('pool-1', 'Bound', { name: 'a', uid: 'uid-a' }),
    });
    const d = await denial(
      updatePod('pool-1', (pod) => {
        pod.metadata!.labels![LABEL_CLAIMED_BY] = 'b';
        pod.metadata!.annotations![ANNOTATION_CLAIMED_BY_UID] = 'uid-b';
      }),
    );
    expect(d.code).toBe(403);
    expect(d.message).toContain('never relabelled from one claim to another');
    expect(d.message).toContain(`metadata.labels[${LABEL_CLAIMED_BY}]`);

    // Remove first, then label for the other claim: each write is allowed.
    await updatePod('pool-1', (pod) => {
      delete pod.metadata!.labels![LABEL_CLAIMED_BY];
      delete pod.metadata!.annotations![ANNOTATION_CLAIMED_BY_UID];
    });
    const relabelled = await updatePod('pool-1', (pod) => {
      pod.metadata!.labels![LABEL_CLAIMED_BY] = 'b';
      pod.metadata!.annotations = { ...pod.metadata!.annotations, [ANNOTATION_CLAIMED_BY_UID]: 'uid-b' };
    });
    expect(relabelled.metadata?.labels?.[LABEL_CLAIMED_BY]).toBe('b');
  });

  it('refuses a PodPool shard pin that is not a shard index (claimkit.dev/shard), with its path; takes one that is', async () => {
    const api = custom();
    const key = { group: GROUP, version: VERSION, namespace: ns.name, plural: 'podpools' };
    const pinned = (name: string, pin: string) => {
      const pool = testPool(ns.name, name, { minIdle: 0, maxPods: 1 });
      pool.metadata.annotations = { [ANNOTATION_SHARD]: pin };
      return pool;
    };
    const d = await denial(api.createNamespacedCustomObject({ ...key, body: pinned('pinned-bad', 'two') }));
    expect(d.code).toBe(403);
    expect(d.message).toContain(`metadata.annotations[${ANNOTATION_SHARD}]`);
    expect(d.message).toContain('from 0 to 255');
    await api.createNamespacedCustomObject({ ...key, body: pinned('pinned-ok', '1'), dryRun: 'All' });
  });

  // The CRDs' CEL rules judge a Capture's status before any webhook is called (object validation
  // precedes validating admission): they refuse the stale token with 422; the webhook's own rule
  // for it stays as defence in depth (packages/webhook unit tests) for CRDs installed without rules.
  it('a Capture status result with a stale token is refused (CRD rules); the webhook judges captures too', async () => {
    const api = custom();
    const key = { group: GROUP, version: VERSION, namespace: ns.name, plural: 'captures' };
    await api.createNamespacedCustomObject({
      ...key,
      body: {
        apiVersion: API_VERSION,
        kind: 'Capture',
        metadata: { name: 'cap' },
        spec: { selector: { matchLabels: { app: 'x' } }, backend: { type: 'External' } },
      },
    });
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const claim = (holder: string, token: number) => ({
      holder: { name: holder, uid: `${holder}-uid` },
      token,
      acquireTime: now,
      renewTime: now,
      leaseSeconds: 3000,
    });
    const setStatus = async (status: Record<string, unknown>) => {
      const cur = (await api.getNamespacedCustomObject({ ...key, name: 'cap' })) as Record<string, unknown>;
      return api.replaceNamespacedCustomObjectStatus({ ...key, name: 'cap', body: { ...cur, status } });
    };
    await setStatus({ phase: 'Capturing', epoch: 1, claim: claim('pod-a', 1) });
    await setStatus({ phase: 'Capturing', epoch: 2, claim: claim('pod-b', 2) }); // takeover, higher token
    const result = (token: number) => ({
      ref: `snap-${token}`,
      token,
      capturedFrom: { name: 'pod-a', uid: 'pod-a-uid' },
      completionTime: now,
    });
    // pod-a finishes late with its old token: the API server refuses the write.
    const d = await denial(setStatus({ phase: 'Captured', epoch: 2, result: result(1) }));
    expect(d.code).toBe(422);
    expect(d.message).toContain(
      'status.result.token: Invalid value: no result without the current claim token',
    );
    // A new holder without a higher token is refused too.
    const d2 = await denial(setStatus({ phase: 'Capturing', epoch: 2, claim: claim('pod-c', 2) }));
    expect(d2.code).toBe(422);
    expect(d2.message).toContain('status.claim.token: Invalid value: a new holder needs a new token');
    // The current holder's result goes through.
    await setStatus({ phase: 'Captured', epoch: 2, result: result(2) });
    // A rule only the webhook has (it needs no old state, but is not in the schema): no empty selector.
    const d3 = await denial(
      api.createNamespacedCustomObject({
        ...key,
        body: {
          apiVersion: API_VERSION,
          kind: 'Capture',
          metadata: { name: 'cap-all' },
          spec: { selector: {}, backend: { type: 'External' } },
        },
      }),
    );
    expect(d3.code).toBe(403);
    expect(d3.message).toContain('an empty selector would select every pod in the namespace');
  });

  it('lets only the controller identity set podName; an impersonated user cannot', async () => {
    const admin = e2eClients();
    await admin.rbac.createNamespacedRole({
      namespace: ns.name,
      body: {
        metadata: { name: 'claim-editor' },
        rules: [
          {
            apiGroups: [GROUP],
            resources: ['podclaims', 'podclaims/status'],
            verbs: ['get', 'list', 'create', 'update', 'patch'],
          },
        ],
      },
    });
    await admin.rbac.createNamespacedRoleBinding({
      namespace: ns.name,
      body: {
        metadata: { name: 'claim-editor' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'claim-editor' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: MALLORY }],
      },
    });
    const mallory = makeClientsAs(e2eCluster().kubeconfigPath, MALLORY).custom;
    const key = { group: GROUP, version: VERSION, namespace: ns.name, plural: 'podclaims' };
    const claimBody = (name: string) => ({
      apiVersion: API_VERSION,
      kind: 'PodClaim',
      metadata: { name },
      spec: { poolName: 'web' },
    });
    await mallory.createNamespacedCustomObject({ ...key, body: claimBody('mine') });
    const cur = (await mallory.getNamespacedCustomObject({ ...key, name: 'mine' })) as {
      spec: Record<string, unknown>;
    };
    const d = await denial(
      mallory.replaceNamespacedCustomObjectStatus({
        ...key,
        name: 'mine',
        body: { ...cur, status: { podName: 'pool-x' } },
      }),
    );
    expect(d.code).toBe(403);
    expect(d.message).toContain('status.podName');
    expect(d.message).toContain(MALLORY);

    // The controller's identity may bind; then another claim cannot take the same pod.
    const api = custom();
    const mine = (await api.getNamespacedCustomObject({ ...key, name: 'mine' })) as {
      spec: Record<string, unknown>;
    };
    await api.replaceNamespacedCustomObjectStatus({
      ...key,
      name: 'mine',
      body: { ...mine, status: { podName: 'pool-x' } },
    });
    await api.createNamespacedCustomObject({ ...key, body: claimBody('theirs') });
    await waitFor('the claim index to see mine -> pool-x', () =>
      webhook!.index.claimsReferencing(ns.name, 'pool-x').some((r) => r.name === 'mine'),
    );
    const theirs = (await api.getNamespacedCustomObject({ ...key, name: 'theirs' })) as {
      spec: Record<string, unknown>;
    };
    const d2 = await denial(
      api.replaceNamespacedCustomObjectStatus({
        ...key,
        name: 'theirs',
        body: { ...theirs, status: { podName: 'pool-x' } },
      }),
    );
    expect(d2.message).toContain('already referenced by claim "mine"');
  });
});
