// The ClusterRoles of deploy/controller/user-roles.yaml on the real API server, held by the
// harness's non-admin user: an External-backend holder bound to claimkit-capture-holder acquires,
// renews and completes a Capture through core's holder operations (what `claimctl capture` runs) and
// can do nothing else; claimkit-view and claimkit-edit reach people through the built-in view and
// edit roles (the controller-manager's aggregation controller).
import { kubeClient, userRoles } from '@claimkit/controller';
import {
  acquireCapture,
  type Capture,
  type Client,
  completeCapture,
  type PodClaim,
  renewCapture,
} from '@claimkit/core';
import { capture, forCreate } from '@claimkit/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eClients, e2eCluster, useTestNamespace } from '../harness/vitest.ts';
import { expectAllInvariants, kube, podSpec, until, untilPodReady } from './helpers.ts';

type Role = { metadata: { name: string } };
const ROLES = userRoles() as Role[];

const ns = useTestNamespace('roles');
let user: Client;

beforeAll(async () => {
  const rbac = e2eClients().rbac;
  for (const body of ROLES) {
    try {
      await rbac.createClusterRole({ body: body as never });
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e;
      await rbac.replaceClusterRole({ name: body.metadata.name, body: body as never });
    }
  }
  user = kubeClient(e2eCluster().userKubeconfigPath);
});

afterAll(async () => {
  const rbac = e2eClients().rbac;
  for (const r of ROLES) await rbac.deleteClusterRole({ name: r.metadata.name }).catch(() => {});
});

async function bind(clusterRole: string): Promise<void> {
  await e2eClients().rbac.createNamespacedRoleBinding({
    namespace: ns.name,
    body: {
      metadata: { name: `user-${clusterRole}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: e2eCluster().userName }],
    },
  });
}

const reasonOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'allowed',
    (e: { reason?: string }) => e.reason ?? String(e),
  );

describe('user roles (deploy/controller/user-roles.yaml)', () => {
  it('claimkit-capture-holder: an External holder acquires, renews and completes, and nothing more', async () => {
    const admin = kube();
    await admin.create(podSpec('holder-0', ns.name, { app: 'job' }));
    // Only a Ready candidate may acquire.
    const pod = await untilPodReady(ns.name, 'holder-0');
    const key = { namespace: ns.name, name: 'job' };
    await admin.create(
      forCreate({ ...capture('job'), metadata: { name: 'job', namespace: ns.name } }) as Capture,
    );

    expect(await reasonOf(user.get('Capture', key))).toBe('Forbidden');
    await bind('claimkit-capture-holder');
    await until(
      'the binding takes effect',
      async () => (await reasonOf(user.get('Capture', key))) === 'allowed',
    );

    const ref = { name: pod.metadata.name, uid: pod.metadata.uid! };
    const { outcome } = await acquireCapture(user, key, ref, Date.now);
    expect(outcome.kind).toBe('acquired');
    const token = (await admin.get('Capture', key)).status!.claim!.token;
    await renewCapture(user, key, token, Date.now);
    await completeCapture(user, key, token, 'registry.example/captures/job:1', Date.now);
    const done = await admin.get('Capture', key);
    expect(done.status).toMatchObject({
      phase: 'Captured',
      result: { ref: 'registry.example/captures/job:1', token },
    });

    // Only status, and only Captures: not the spec, not claims, not pods' writes.
    const c = await user.get('Capture', key);
    expect(await reasonOf(user.update({ ...c, spec: { ...c.spec, maxAttempts: 9 } }))).toBe('Forbidden');
    expect(await reasonOf(user.list('PodClaim', { namespace: ns.name }))).toBe('Forbidden');
    expect(await reasonOf(user.delete('Pod', { namespace: ns.name, name: 'holder-0' }))).toBe('Forbidden');
    await expectAllInvariants(ns.name);
  });

  it('claimkit-view and claimkit-edit reach people through the built-in view and edit roles', async () => {
    const claim = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name: 'by-user', namespace: ns.name },
      spec: { poolName: 'web' },
    } as PodClaim;
    await bind('view');
    await until(
      'view aggregates claimkit-view',
      async () => (await reasonOf(user.list('PodClaim', { namespace: ns.name }))) === 'allowed',
    );
    expect(await reasonOf(user.create(claim))).toBe('Forbidden');
    await bind('edit');
    await until(
      'edit aggregates claimkit-edit',
      async () => (await reasonOf(user.create(claim))) === 'allowed',
    );
    await kube().delete('PodClaim', { namespace: ns.name, name: 'by-user' });
    await expectAllInvariants(ns.name);
  });
});
