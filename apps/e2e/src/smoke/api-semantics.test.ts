// Optimistic concurrency, delete preconditions, ownerReference GC and Leases: the behaviours the
// claim algorithms rely on, checked against the real API server.
import { describe, expect, it } from 'vitest';
import { failureStatus, isNotFound, V1MicroTime, waitFor } from '../harness/index.ts';
import { e2eClients, useTestNamespace } from '../harness/vitest.ts';

describe('API semantics', () => {
  const ns = useTestNamespace('smoke-api');
  const core = () => e2eClients().core;

  it('an update carrying a stale resourceVersion fails with 409 Conflict', async () => {
    const namespace = ns.name;
    const created = await core().createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'cas' }, data: { n: '0' } },
    });
    const rv0 = created.metadata?.resourceVersion;
    expect(rv0).toBeTruthy();

    const updated = await core().replaceNamespacedConfigMap({
      name: 'cas',
      namespace,
      body: { ...created, data: { n: '1' } },
    });
    expect(updated.metadata?.resourceVersion).not.toBe(rv0);

    // The same write from a reader that still holds rv0 loses.
    expect(
      await failureStatus(
        core().replaceNamespacedConfigMap({ name: 'cas', namespace, body: { ...created, data: { n: '2' } } }),
      ),
    ).toBe(409);
    const now = await core().readNamespacedConfigMap({ name: 'cas', namespace });
    expect(now.data).toEqual({ n: '1' });

    // Without a resourceVersion an update is unconditional (last writer wins).
    const { resourceVersion: _drop, ...meta } = now.metadata ?? {};
    const forced = await core().replaceNamespacedConfigMap({
      name: 'cas',
      namespace,
      body: { metadata: meta, data: { n: '3' } },
    });
    expect(forced.data).toEqual({ n: '3' });
  });

  it('delete preconditions on resourceVersion and UID are enforced (409) and honoured', async () => {
    const namespace = ns.name;
    const cm = await core().createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'precond' }, data: { a: '1' } },
    });
    const uid = cm.metadata?.uid ?? '';
    const rv = cm.metadata?.resourceVersion ?? '';
    await core().patchNamespacedConfigMap({
      name: 'precond',
      namespace,
      body: [{ op: 'replace', path: '/data/a', value: '2' }],
    });

    const del = (preconditions: { uid?: string; resourceVersion?: string }) =>
      core().deleteNamespacedConfigMap({ name: 'precond', namespace, body: { preconditions } });
    expect(await failureStatus(del({ resourceVersion: rv }))).toBe(409);
    expect(await failureStatus(del({ uid: '00000000-0000-0000-0000-000000000000' }))).toBe(409);
    await core().readNamespacedConfigMap({ name: 'precond', namespace }); // still there

    const current = await core().readNamespacedConfigMap({ name: 'precond', namespace });
    await del({ uid, resourceVersion: current.metadata?.resourceVersion ?? '' });
    expect(await failureStatus(core().readNamespacedConfigMap({ name: 'precond', namespace }))).toBe(404);

    // A UID precondition also protects against deleting a re-created namesake.
    await core().createNamespacedConfigMap({ namespace, body: { metadata: { name: 'precond' } } });
    expect(await failureStatus(del({ uid }))).toBe(409);
  });

  it('the garbage collector deletes a dependent once its owner is gone', async () => {
    const namespace = ns.name;
    const owner = await core().createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'owner' } },
    });
    await core().createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' },
          ],
        },
      },
    });
    await core().deleteNamespacedConfigMap({ name: 'owner', namespace, propagationPolicy: 'Background' });
    await waitFor(
      'the dependent ConfigMap to be garbage collected',
      async () => {
        try {
          await core().readNamespacedConfigMap({ name: 'dependent', namespace });
          return false;
        } catch (e) {
          if (isNotFound(e)) return true;
          throw e;
        }
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
  });

  it('a Lease can be created and renewed, and a stale renewal conflicts', async () => {
    const namespace = ns.name;
    const leases = e2eClients().coordination;
    const acquired = new V1MicroTime();
    const lease = await leases.createNamespacedLease({
      namespace,
      body: {
        metadata: { name: 'holder' },
        spec: {
          holderIdentity: 'pod-a',
          leaseDurationSeconds: 15,
          acquireTime: acquired,
          renewTime: acquired,
        },
      },
    });
    expect(lease.spec?.holderIdentity).toBe('pod-a');

    const renewedAt = new V1MicroTime(acquired.getTime() + 1_000);
    const renewed = await leases.replaceNamespacedLease({
      name: 'holder',
      namespace,
      body: { ...lease, spec: { ...lease.spec, renewTime: renewedAt } },
    });
    expect(renewed.metadata?.resourceVersion).not.toBe(lease.metadata?.resourceVersion);
    expect(new Date(renewed.spec?.renewTime ?? 0).getTime()).toBe(renewedAt.getTime());

    // A second holder that read the first version cannot take it over.
    expect(
      await failureStatus(
        leases.replaceNamespacedLease({
          name: 'holder',
          namespace,
          body: { ...lease, spec: { ...lease.spec, holderIdentity: 'pod-b' } },
        }),
      ),
    ).toBe(409);
    const now = await leases.readNamespacedLease({ name: 'holder', namespace });
    expect(now.spec?.holderIdentity).toBe('pod-a');
  });
});
