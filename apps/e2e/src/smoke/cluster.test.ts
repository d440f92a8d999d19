import { describe, expect, it } from 'vitest';
import { failureStatus, readManifests, waitFor } from '../harness/index.ts';
import { crdDir } from '../harness/paths.ts';
import { e2eClients, e2eCluster, useTestNamespace } from '../harness/vitest.ts';

describe('cluster', () => {
  const ns = useTestNamespace('smoke-cluster');

  it('/version reports the Kubernetes version the control plane was built with', async () => {
    const info = e2eCluster();
    const v = await e2eClients().version.getCode();
    expect(v.gitVersion).toMatch(/^v1\.\d+\.\d+/);
    expect(v.major).toBe('1');
    if (info.provider === 'local') {
      expect(v.gitVersion).toBe(info.kubernetesVersion);
      expect(`v${v.major}.${v.minor}`).toBe(info.kubernetesVersion.split('.').slice(0, 2).join('.'));
    }
  });

  it('every CRD in deploy/crds is Established', async () => {
    const names = readManifests(crdDir)
      .filter((o) => o.kind === 'CustomResourceDefinition')
      .map((o) => o.metadata?.name ?? '');
    for (const name of names) {
      const crd = await e2eClients().apiextensions.readCustomResourceDefinition({ name });
      expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status, name).toBe('True');
    }
  });

  it('the non-admin identity is authenticated but Forbidden until RBAC grants it access', async () => {
    const { userName } = e2eCluster();
    const user = e2eClients('user');
    expect(await failureStatus(user.core.listNamespacedPod({ namespace: ns.name }))).toBe(403);

    const admin = e2eClients();
    await admin.rbac.createNamespacedRole({
      namespace: ns.name,
      body: {
        metadata: { name: 'pod-reader' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }],
      },
    });
    await admin.rbac.createNamespacedRoleBinding({
      namespace: ns.name,
      body: {
        metadata: { name: 'pod-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
        subjects: [
          userName.startsWith('system:serviceaccount:')
            ? {
                kind: 'ServiceAccount',
                name: userName.split(':')[3] ?? '',
                namespace: userName.split(':')[2] ?? '',
              }
            : { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: userName },
        ],
      },
    });
    // RBAC is served from informers: the binding takes effect shortly after it is written.
    await waitFor(
      'the RoleBinding to take effect',
      () => user.core.listNamespacedPod({ namespace: ns.name }),
      {
        timeoutMs: 30_000,
      },
    );
    // Still nothing outside the granted namespace.
    expect(await failureStatus(user.core.listNamespacedPod({ namespace: 'default' }))).toBe(403);
  });
});
