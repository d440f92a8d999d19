// One component installed from deploy/ as `kubectl apply -k deploy/controller` would (after
// deploy/crds, which every provider installs): the same path the kind provider takes
// (deploy-components.ts), here on the real node with our own image. Its two replicas roll out, one
// holds the Lease, claims bind pods that run for real; deleting what was applied leaves nothing.
import type { PodClaim } from '@claimkit/core';
import { afterAll, expect, it } from 'vitest';
import { expectConverged } from '../chaos/helpers.ts';
import { finalizeClaims, kube, startController, until } from '../controller/helpers.ts';
import { deployComponent, SYSTEM_NAMESPACE } from '../harness/deploy-components.ts';
import type { KubernetesObject } from '../harness/index.ts';
import { realNodePlacement } from '../harness/local-node.ts';
import { describeOnRealNode, e2eClients, useTestNamespace } from '../harness/vitest.ts';
import { realPool, unlessNotFound } from './helpers.ts';

describeOnRealNode(
  'deploy/controller applied on its own (kubectl apply -k)',
  ['controller', 'workload'],
  (node) => {
    const ns = useTestNamespace('apply');
    let applied: KubernetesObject[] = [];

    afterAll(async () => {
      // Whatever the test left: our own controller finalizes the claims, then the applied objects go.
      const ctl = await startController(ns.name);
      try {
        await finalizeClaims(ns.name, 60_000);
      } finally {
        await ctl.stop();
      }
      await removeApplied();
    }, 180_000);

    async function removeApplied() {
      const { objects, core } = e2eClients();
      for (const o of [...applied].reverse()) await unlessNotFound(objects.delete(o));
      applied = [];
      await until(
        `namespace ${SYSTEM_NAMESPACE} deleted`,
        async () => (await unlessNotFound(core.readNamespace({ name: SYSTEM_NAMESPACE }))) === undefined,
        120_000,
      );
    }

    it('rolls out both replicas on the real node; one holds the Lease; claims bind running pods', async () => {
      applied = await deployComponent(e2eClients(), 'controller', { placement: realNodePlacement() });
      const pods = (
        await e2eClients().core.listNamespacedPod({
          namespace: SYSTEM_NAMESPACE,
          labelSelector: 'app.kubernetes.io/component=controller',
        })
      ).items;
      expect(pods).toHaveLength(2);
      for (const p of pods) expect(p.spec?.nodeName).toBe(node.name);
      await until('one controller replica holding the Lease', async () => {
        const lease = await unlessNotFound(
          e2eClients().coordination.readNamespacedLease({
            namespace: SYSTEM_NAMESPACE,
            name: 'claimkit-controller',
          }),
        );
        const holder = lease?.spec?.holderIdentity ?? '';
        return pods.some((p) => holder.startsWith(p.metadata?.name ?? '-'));
      });

      await kube().create(realPool(ns.name, 'applied', { minIdle: 1, maxPods: 4 }));
      for (const name of ['one', 'two']) {
        await kube().create({
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaim',
          metadata: { name, namespace: ns.name },
          spec: { poolName: 'applied' },
        } as PodClaim);
      }
      await expectConverged(ns.name, 'deploy/controller', Date.now(), 120_000);
    }, 420_000);

    it('deleting what was applied removes every object of it', async () => {
      const ctl = await startController(ns.name);
      try {
        await finalizeClaims(ns.name, 60_000);
      } finally {
        await ctl.stop();
      }
      const kinds = applied.map((o) => `${o.kind}/${o.metadata?.name}`);
      expect(kinds).toEqual(
        expect.arrayContaining(['Namespace/claimkit-system', 'Deployment/claimkit-controller']),
      );
      const { objects } = e2eClients();
      const clusterScoped = applied.filter((o) => !o.metadata?.namespace && o.kind !== 'Namespace');
      await removeApplied();
      for (const o of clusterScoped)
        expect(
          await unlessNotFound(
            objects.read({
              apiVersion: o.apiVersion ?? '',
              kind: o.kind ?? '',
              metadata: { name: o.metadata?.name ?? '' },
            }),
          ),
        ).toBeUndefined();
    }, 240_000);
  },
);
