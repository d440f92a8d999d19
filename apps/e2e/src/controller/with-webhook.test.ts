// The controller's own flows with the admission webhook installed (failurePolicy: Fail): binding,
// migration with a drain, scale-in during the migration, Lost and rebind, finalize, capture
// takeover from a dead holder. Every controller write must pass the webhook's rules; a stale
// writer's must not. Ends with every invariant over the namespace.
import {
  ANNOTATION_MIGRATE,
  acquireCapture,
  type Capture,
  ClaimSuperseded,
  completeCapture,
  LABEL_CLAIM_SET,
  LABEL_POOL,
  LABEL_STATE,
  type Pod,
  type PodClaim,
  type PodClaimSet,
} from '@claimkit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPool } from '../harness/objects.ts';
import { e2eCluster, useTestNamespace } from '../harness/vitest.ts';
import { type InstalledWebhook, installWebhook } from '../harness/webhook.ts';
import {
  expectAllInvariants,
  finalizeClaims,
  getOrUndefined,
  isReady,
  kube,
  podSpec,
  type RunningController,
  startController,
  until,
} from './helpers.ts';

const ADMIN_USER = 'claimkit-e2e-admin'; // the harness's cluster-admin identity, which the in-process controller uses
const local = e2eCluster().provider === 'local';

describe.skipIf(!local)('controller flows with the admission webhook installed', () => {
  const ns = useTestNamespace('ctl-webhook');
  let webhook: InstalledWebhook | undefined;
  let ctl: RunningController | undefined;

  beforeAll(async () => {
    const c = kube();
    webhook = await installWebhook({
      kubeconfigPath: e2eCluster().kubeconfigPath,
      namespace: ns.name,
      controllerUsers: [ADMIN_USER],
      probe: () =>
        c.create({
          ...podSpec('probe', ns.name, { [LABEL_POOL]: 'web', [LABEL_STATE]: 'NoSuchState' }),
        } as Pod),
    });
    ctl = await startController(ns.name);
  }, 120_000);

  afterAll(async () => {
    if (ctl) await finalizeClaims(ns.name).catch(() => {});
    await ctl?.stop();
    await webhook?.stop();
  });

  it('binds, migrates, scales in, goes Lost and rebinds, finalizes, and takes a capture over', async () => {
    const c = kube();
    const n = ns.name;
    const pool = testPool(n, 'web', { minIdle: 2, maxPods: 10, drainSeconds: 3 });
    await c.create(pool);
    const set: PodClaimSet = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaimSet',
      metadata: { name: 'set', namespace: n },
      spec: {
        replicas: 2,
        selector: { matchLabels: { [LABEL_CLAIM_SET]: 'set' } },
        template: { metadata: { labels: { [LABEL_CLAIM_SET]: 'set' } }, spec: { poolName: 'web' } },
      },
    };
    await c.create(set);
    const bound = async () =>
      (await c.list('PodClaim', { namespace: n })).items.filter(
        (x: PodClaim) => x.status?.phase === 'Bound' && x.status?.podName && !x.metadata.deletionTimestamp,
      );
    const [a] = await until(
      'two bound claims',
      async () => {
        const b = await bound();
        return b.length === 2 ? b : undefined;
      },
      60_000,
    );

    // Migration (with a 3 s drain) and, meanwhile, scale-in to 1: the migrating claim stays.
    await c.patch(
      'PodClaim',
      { namespace: n, name: a!.metadata.name },
      { metadata: { annotations: { [ANNOTATION_MIGRATE]: 'e2e' } } },
    );
    await until('a migrating', async () => {
      const x = await getOrUndefined(c.get('PodClaim', { namespace: n, name: a!.metadata.name }));
      return x?.status?.sourcePod ? x : undefined;
    });
    await c.patch('PodClaimSet', { namespace: n, name: 'set' }, { spec: { replicas: 1 } });
    const survivor = await until('scale-in done', async () => {
      const left = (await c.list('PodClaim', { namespace: n })).items.filter(
        (x: PodClaim) => !x.metadata.deletionTimestamp,
      );
      return left.length === 1 ? left[0] : undefined;
    });
    expect(survivor!.metadata.name).toBe(a!.metadata.name);
    const migrated = await until('migration finished', async () => {
      const x = await getOrUndefined(c.get('PodClaim', { namespace: n, name: a!.metadata.name }));
      return x && !x.status?.sourcePod && x.status?.phase === 'Bound' ? x : undefined;
    });

    // Delete the bound pod: Lost, then bound again to an Idle pod.
    await c.delete('Pod', { namespace: n, name: migrated!.status!.podName! }, { gracePeriodSeconds: 0 });
    const rebound = await until(
      'rebound',
      async () => {
        const x = await getOrUndefined(c.get('PodClaim', { namespace: n, name: a!.metadata.name }));
        return x?.status?.phase === 'Bound' &&
          x.status?.podName &&
          x.status?.podName !== migrated!.status?.podName
          ? x
          : undefined;
      },
      60_000,
    );
    expect(rebound!.status?.podName).not.toBe(migrated!.status?.podName);

    // A capture held by a pod that dies is taken over by another Ready pod; the old holder's late
    // completion is refused (client side by its token, server side by the CRD rules, which run
    // before the webhook).
    for (const name of ['worker-0', 'worker-1']) await c.create(podSpec(name, n, { app: 'worker' }));
    const workers = await until('workers ready', async () => {
      const ps = (await c.list('Pod', { namespace: n, labelSelector: 'app=worker' })).items.filter(isReady);
      return ps.length === 2 ? ps : undefined;
    });
    const cap: Capture = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name: 'snap', namespace: n },
      spec: {
        selector: { matchLabels: { app: 'worker' } },
        leaseSeconds: 3000,
        timeoutSeconds: 1800,
        maxAttempts: 3,
        backend: { type: 'External' },
      },
    };
    await c.create(cap);
    const w0 = workers!.find((p: Pod) => p.metadata.name === 'worker-0')!;
    const got = await acquireCapture(
      c,
      { namespace: n, name: 'snap' },
      { name: 'worker-0', uid: w0.metadata.uid! },
      Date.now,
    );
    expect(got.outcome.kind).toBe('acquired');
    const oldToken = got.capture.status!.claim!.token;
    await c.delete('Pod', { namespace: n, name: 'worker-0' }, { gracePeriodSeconds: 0 });
    const taken = await until('takeover', async () => {
      const x = await c.get('Capture', { namespace: n, name: 'snap' });
      return x.status?.claim?.holder.name === 'worker-1' ? x : undefined;
    });
    expect(taken!.status!.claim!.token).toBeGreaterThan(oldToken);
    await expect(
      completeCapture(c, { namespace: n, name: 'snap' }, oldToken, 'late', Date.now),
    ).rejects.toBeInstanceOf(ClaimSuperseded);
    const fresh = await c.get('Capture', { namespace: n, name: 'snap' });
    const stale = {
      ...fresh,
      status: {
        ...fresh.status,
        phase: 'Captured' as const,
        result: {
          ref: 'late',
          token: oldToken,
          capturedFrom: { name: 'worker-0', uid: w0.metadata.uid! },
          completionTime: new Date().toISOString(),
        },
      },
    };
    delete (stale.status as { claim?: unknown }).claim;
    await expect(c.updateStatus(stale)).rejects.toMatchObject({ reason: 'Invalid' });

    // Finalize everything through the webhook, then all invariants.
    await finalizeClaims(n);
    await expectAllInvariants(n);
  }, 180_000);
});
