// What every helm install of the chart on the real node needs, as a user without cert-manager does
// it: the release namespace under the restricted Pod Security level, the webhook's serving
// certificate as a Secret and its CA as the chart's caBundle; then waits that name what they waited
// for (every Deployment rolled out, the API server reaching the webhook through its Service) and the
// clean-up that leaves no webhook (failurePolicy Fail) behind a failed test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ANNOTATION_MIGRATE, type PodClaim } from '@claimkit/core';
import { finalizeClaims, getOrUndefined, kube, startController, until } from '../controller/helpers.ts';
import { deploymentRolledOut, SYSTEM_NAMESPACE } from '../harness/deploy-components.ts';
import { DiscoveryV1Api, serviceServingCert } from '../harness/index.ts';
import { realNodePlacement } from '../harness/local-node.ts';
import { deleteTestNamespace, e2eClients } from '../harness/vitest.ts';
import { runHelm } from '../helm/subchart.ts';
import { realPool, unlessAlreadyExists } from './helpers.ts';

export const RELEASE = 'claimkit';
export const SYSTEM = SYSTEM_NAMESPACE;

/**
 * The release namespace (restricted) and the webhook's TLS Secret; returns the values every install
 * passes: both components placed on the real node, the webhook's caBundle.
 */
export async function prepareReleaseNamespace(scratch: string): Promise<Record<string, unknown>> {
  const { core } = e2eClients();
  await unlessAlreadyExists(
    core.createNamespace({
      body: {
        metadata: {
          name: SYSTEM,
          labels: {
            'pod-security.kubernetes.io/enforce': 'restricted',
            'pod-security.kubernetes.io/warn': 'restricted',
          },
        },
      },
    }),
  );
  const tls = await serviceServingCert(join(scratch, 'tls'), [
    `claimkit-webhook.${SYSTEM}.svc`,
    `claimkit-webhook.${SYSTEM}.svc.cluster.local`,
  ]);
  await core.createNamespacedSecret({
    namespace: SYSTEM,
    body: {
      metadata: { name: 'claimkit-webhook-tls' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': readFileSync(tls.cert).toString('base64'),
        'tls.key': readFileSync(tls.key).toString('base64'),
      },
    },
  });
  const placement = realNodePlacement();
  return {
    controller: { ...placement },
    webhook: {
      ...placement,
      certManager: { enabled: false },
      caBundle: readFileSync(tls.caCert).toString('base64'),
    },
  };
}

/** Every Deployment of the release Ready with all its replicas updated; says which is not. */
export async function deploymentsReady(what: string, timeoutMs = 180_000): Promise<void> {
  const c = e2eClients();
  const ds = (await c.apps.listNamespacedDeployment({ namespace: SYSTEM })).items;
  if (ds.length === 0) throw new Error(`${what}: no Deployment in ${SYSTEM}`);
  for (const d of ds) {
    await deploymentRolledOut(c, SYSTEM, d.metadata?.name ?? '', timeoutMs).catch((e: Error) => {
      throw new Error(`${what}: ${e.message}`);
    });
  }
}

/**
 * The API server reaches the webhook through its Service: a dry-run create in `ns` passes the
 * webhook (its Ready pods reach the Service's EndpointSlice and kube-proxy's rules a moment after
 * the rollout; until then the call is refused and, failurePolicy Fail, so is the write).
 */
export async function webhookReachable(ns: string): Promise<void> {
  const { objects } = e2eClients();
  let last = '';
  await until(
    `the API server calling the webhook through Service ${SYSTEM}/claimkit-webhook`,
    async () => {
      try {
        await objects.create(realPool(ns, 'dry-run', { minIdle: 0, maxPods: 1 }) as never, undefined, 'All');
        return true;
      } catch (e) {
        last = e instanceof Error ? e.message : String(e);
        return false;
      }
    },
    60_000,
  ).catch(async (e: Error) => {
    const slices = await e2eClients().kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
      namespace: SYSTEM,
      labelSelector: 'kubernetes.io/service-name=claimkit-webhook',
    });
    throw new Error(
      `${e.message}; last answer: ${last}; endpoints: ${JSON.stringify(slices.items.map((x) => x.endpoints))}`,
    );
  });
}

/**
 * After a file's tests, pass or fail: the release uninstalled (its webhook must not outlive the
 * file), the claims of `ns` finalized by a controller of ours, both namespaces deleted.
 */
export async function removeRelease(helm: string, helmEnv: NodeJS.ProcessEnv, ns: string): Promise<void> {
  await runHelm(helm, ['uninstall', RELEASE, '-n', SYSTEM, '--wait', '--timeout', '60s'], helmEnv);
  if (ns) {
    const ctl = await startController(ns);
    try {
      await finalizeClaims(ns, 60_000);
    } finally {
      await ctl.stop();
    }
    await deleteTestNamespace(ns);
  }
  await deleteTestNamespace(SYSTEM).catch(() => undefined);
}

/** What a churn saw while a release rolled: the upgrade timeline's row. */
export interface ChurnTimeline {
  created: number;
  /** Creates the API server refused (the webhook, failurePolicy Fail, unreachable while it rolls). */
  refused: number;
  bound: number;
  /** Claims asked to migrate, and those whose migration finished (status.migrations > 0). */
  migrationsAsked: number;
  migrated: number;
  /** Claims seen Lost at any moment. */
  lost: string[];
  /** The slowest create → Bound seen (ms), and the claims still waiting at the end. */
  maxBindMs: number;
  waiting: string[];
  /** Every claim it created. */
  names: string[];
}

/**
 * Claims created every `everyMs` on pool `poolName` of `ns`, every third asks an earlier one to
 * migrate, while something else happens (a helm upgrade, a rollback); a 200 ms watch-by-list records
 * when each was first Bound and whether any was ever Lost. `stop()` ends the churn and, once every
 * claim it made is Bound (or `settleMs` passed), returns the timeline.
 */
export function churnClaims(o: { ns: string; poolName: string; prefix: string; everyMs?: number }) {
  const c = kube();
  const createdAt = new Map<string, number>();
  const boundAfter = new Map<string, number>();
  const lost = new Set<string>();
  const migrationsAsked = new Set<string>();
  let stopping = false;
  let settleBy = Number.POSITIVE_INFINITY;
  let n = 0;
  let refused = 0;
  const watch = (async () => {
    while (!stopping || boundAfter.size < createdAt.size) {
      for (const cl of (await c.list('PodClaim', { namespace: o.ns })).items as PodClaim[]) {
        const name = cl.metadata.name;
        if (!createdAt.has(name)) continue;
        if (cl.status?.phase === 'Lost') lost.add(name);
        if (cl.status?.phase === 'Bound' && !boundAfter.has(name))
          boundAfter.set(name, Date.now() - createdAt.get(name)!);
      }
      if (stopping && boundAfter.size >= createdAt.size) break;
      await new Promise((r) => setTimeout(r, 200));
      if (stopping && Date.now() > settleBy) break;
    }
  })();
  const churn = (async () => {
    while (!stopping) {
      const name = `${o.prefix}-${n++}`;
      createdAt.set(name, Date.now());
      await c
        .create({
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaim',
          metadata: { name, namespace: o.ns, finalizers: ['claimkit.dev/release'] },
          spec: { poolName: o.poolName },
        } as PodClaim)
        .catch((e: Error) => {
          // Refused while the webhook rolls (failurePolicy Fail): not a claim.
          createdAt.delete(name);
          refused++;
          process.stderr.write(`[churn] create ${name}: ${e.message.split('\n')[0]}\n`);
        });
      if (n % 3 === 0 && n >= 3) {
        const target = `${o.prefix}-${n - 3}`;
        if (boundAfter.has(target)) {
          const done = await getOrUndefined(
            c.patch(
              'PodClaim',
              { namespace: o.ns, name: target },
              { metadata: { annotations: { [ANNOTATION_MIGRATE]: `${o.prefix}-${n}` } } },
            ),
          );
          if (done) migrationsAsked.add(target);
        }
      }
      await new Promise((r) => setTimeout(r, o.everyMs ?? 1500));
    }
  })();
  return {
    async stop(settleMs = 120_000): Promise<ChurnTimeline> {
      stopping = true;
      await churn;
      settleBy = Date.now() + settleMs;
      await watch;
      const claims = (await c.list('PodClaim', { namespace: o.ns })).items as PodClaim[];
      const migrated = claims.filter(
        (cl) => migrationsAsked.has(cl.metadata.name) && (cl.status?.migrations ?? 0) > 0,
      ).length;
      return {
        created: createdAt.size,
        refused,
        bound: boundAfter.size,
        migrationsAsked: migrationsAsked.size,
        migrated,
        lost: [...lost],
        maxBindMs: Math.max(0, ...boundAfter.values()),
        waiting: [...createdAt.keys()].filter((k) => !boundAfter.has(k)),
        names: [...createdAt.keys()],
      };
    },
  };
}
