// Public entry of the e2e harness (`@claimkit/e2e/harness`, also for the developer environment in
// apps/dev): start a cluster with the provider chosen by CLAIMKIT_E2E_PROVIDER, get clients for it,
// act as a ServiceAccount, manage the runs of local clusters.
import { useExistingCluster } from './existing.ts';
import { startKindCluster } from './kind.ts';
import { type LocalClusterOptions, startLocalCluster } from './local.ts';
import type { ClusterHandle, ProviderName } from './types.ts';

export { controlPlaneVersions, ensureBinaries, ensureHelm, ensurePromtool } from './binaries.ts';
export { type CheckpointNode, type RestoredContainer, restoreCheckpoint } from './checkpoint-restore.ts';
export {
  type Fault,
  type FaultPlan,
  type FaultProxy,
  type FaultProxyOptions,
  faultDecider,
  seededRandom,
  startFaultProxy,
} from './fault-proxy.ts';
export { writeServiceAccountKubeconfig } from './identity.ts';
export { type BuiltImage, buildImages, type ImagesResult, parseImageLines } from './images.ts';
export {
  apiMessage,
  applyObjects,
  type Clients,
  DiscoveryV1Api,
  failureStatus,
  installCrds,
  isNotFound,
  type KubernetesObject,
  loadKubeConfig,
  loadYaml,
  makeClients,
  makeClientsAs,
  PolicyV1Api,
  readManifests,
  statusCode,
  V1MicroTime,
  type V1Pod,
} from './kube.ts';
export { type LocalCluster, type LocalClusterOptions, startLocalCluster } from './local.ts';
export {
  COMPONENTS,
  type ComponentName,
  type ComponentState,
  componentStates,
  isComponentName,
  restartComponent,
  startComponent,
  stopComponent,
  untilAllHealthy,
} from './local-control.ts';
export {
  REAL_NODE_KEY,
  REAL_NODE_NAME,
  REAL_NODE_VALUE,
  type RealNode,
  realNodePlacement,
  runPoolOnRealNode,
  WORKLOAD_IMAGE,
} from './local-node.ts';
export { type TestPoolOptions, testPool } from './objects.ts';
export { crdDir, repoRoot, runsDir } from './paths.ts';
export { E2E_USER, serviceServingCert } from './pki.ts';
export { isAlive, isOurs, type PidFile, readPidFile, reapRuns } from './procs.ts';
export type { ClusterHandle, ProviderName } from './types.ts';
export { waitFor } from './wait.ts';
// The in-process webhook (webhook.ts) is its own entry, `@claimkit/e2e/harness/webhook`: this one
// imports no claimkit package, so that vitest's globalSetup (global-setup.ts) can load it.

export function providerFromEnv(): ProviderName {
  const p = process.env.CLAIMKIT_E2E_PROVIDER ?? 'local';
  if (p === 'local' || p === 'kind' || p === 'kubeconfig') return p;
  throw new Error(`CLAIMKIT_E2E_PROVIDER must be local, kind or kubeconfig (got ${JSON.stringify(p)})`);
}

/** Starts (or attaches to) the cluster the suites run against. */
export function startCluster(
  provider: ProviderName = providerFromEnv(),
  opts: LocalClusterOptions = {},
): Promise<ClusterHandle> {
  switch (provider) {
    case 'local':
      return startLocalCluster(opts);
    case 'kind':
      return startKindCluster({ ...(opts.log ? { log: opts.log } : {}), crdDir: opts.crdDir ?? undefined });
    case 'kubeconfig':
      return useExistingCluster({ crdDir: opts.crdDir ?? undefined });
  }
}
