// vitest globalSetup of the `e2e` project: one cluster for the whole run (provider from
// CLAIMKIT_E2E_PROVIDER, default local), handed to test files with provide/inject, stopped in
// teardown. The local provider also cleans up on signals and through a watchdog if we are killed.
import type { TestProject } from 'vitest/node';
import { ensurePreviousRelease } from './harness/binaries.ts';
import { ensureHelm, ensurePromtool, makeClients, providerFromEnv, startCluster } from './harness/index.ts';
import type { LocalCluster } from './harness/local.ts';
import type { E2EClusterInfo } from './harness/vitest.ts';

export default async function setup(project: TestProject) {
  const provider = providerFromEnv();
  const t0 = Date.now();
  // helm for the chart test, built (or found in the cache) while the cluster starts, not during tests.
  const helm = ensureHelm().then(
    (path) => ({ path }),
    (err: unknown) => ({ error: String(err) }),
  );
  // promtool for the monitoring checks, the same way (cached after its first build).
  const promtool = ensurePromtool().then(
    (path) => ({ path }),
    (err: unknown) => ({ error: String(err) }),
  );
  // The previous release's tree and images, for the release e2e (on the local provider's real node):
  // a cold run builds them while the control plane compiles.
  const previousRelease = provider === 'local' ? ensurePreviousRelease() : Promise.resolve('');
  const cluster = await startCluster(provider);
  project.provide('claimkitHelm', await helm);
  project.provide('claimkitPromtool', await promtool);
  let kubernetesVersion: string;
  let stateDir: string | undefined;
  let node: Pick<E2EClusterInfo, 'realNode' | 'realNodeMissing' | 'images' | 'imagesFailed'> = {};
  if (cluster.provider === 'local') {
    const local = cluster as LocalCluster;
    kubernetesVersion = local.kubernetesVersion;
    stateDir = local.stateDir;
    if (local.realNode) {
      const {
        name,
        ip,
        containerdSocket,
        binDir,
        kubeletPort,
        checkpointDir,
        criuDir,
        registry,
        runtimeVersion,
      } = local.realNode;
      node = {
        realNode: {
          name,
          ip,
          containerdSocket,
          binDir,
          kubeletPort,
          checkpointDir,
          ...(criuDir ? { criuDir } : {}),
          registry,
          runtimeVersion,
        },
      };
    }
    const missing = local.realNodeMissing ?? local.imagesMissing;
    if (missing) node.realNodeMissing = missing;
    node.images = Object.fromEntries(local.images.map((i) => [i.name, i.ref]));
    if (local.imagesFailed) node.imagesFailed = local.imagesFailed;
    process.stderr.write(
      `[e2e] local cluster up in ${((Date.now() - t0) / 1000).toFixed(1)}s ` +
        `(binaries ${(local.timings.binariesMs / 1000).toFixed(1)}s, start ${(local.timings.startMs / 1000).toFixed(1)}s); ` +
        `export KUBECONFIG=${cluster.kubeconfigPath}\n`,
    );
  } else {
    kubernetesVersion = (await makeClients(cluster.kubeconfigPath).version.getCode()).gitVersion;
  }
  const info: E2EClusterInfo = {
    provider: cluster.provider,
    kubeconfigPath: cluster.kubeconfigPath,
    userKubeconfigPath: cluster.userKubeconfigPath,
    userName: cluster.userName,
    server: cluster.server,
    kubernetesVersion,
    ...(stateDir ? { stateDir } : {}),
    ...node,
  };
  project.provide('claimkitE2E', info);
  const previous = await previousRelease;
  if (previous) process.stderr.write(`${previous}\n`);
  return async () => {
    await cluster.stop();
  };
}
