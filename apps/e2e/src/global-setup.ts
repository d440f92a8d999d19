// vitest globalSetup of the `e2e` project: one cluster for the whole run (provider from
// CLAIMKIT_E2E_PROVIDER, default local), handed to test files with provide/inject, stopped in
// teardown. The local provider also cleans up on signals and through a watchdog if we are killed.
import type { TestProject } from 'vitest/node';
import { type BuiltImage, buildImages } from './harness/images.ts';
import { ensureHelm, makeClients, providerFromEnv, startCluster } from './harness/index.ts';
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
  // Our images, built while the control plane builds and starts; the real node imports them.
  type Built = { images?: BuiltImage[]; missing?: string };
  const images: Promise<Built> | undefined =
    provider === 'local' && process.env.CLAIMKIT_E2E_REAL_NODE !== '0'
      ? buildImages().then(
          (r): Built => (r.ok ? { images: r.images } : { missing: r.reason }),
          (e: unknown): Built => ({
            missing: `the images did not build: ${e instanceof Error ? e.message : String(e)}`,
          }),
        )
      : undefined;
  const cluster = await startCluster(provider, {
    ...(images ? { nodeImages: async () => (await images).images?.map((i) => i.archive) ?? [] } : {}),
  });
  project.provide('claimkitHelm', await helm);
  let kubernetesVersion: string;
  let stateDir: string | undefined;
  let node: Pick<E2EClusterInfo, 'realNode' | 'realNodeMissing' | 'images'> = {};
  if (cluster.provider === 'local') {
    const local = cluster as LocalCluster;
    kubernetesVersion = local.kubernetesVersion;
    stateDir = local.stateDir;
    const built = await images;
    if (local.realNode) {
      const { name, ip, containerdSocket, binDir } = local.realNode;
      node = { realNode: { name, ip, containerdSocket, binDir } };
    }
    const missing = local.realNodeMissing ?? built?.missing;
    if (missing) node.realNodeMissing = missing;
    if (built?.images) node.images = Object.fromEntries(built.images.map((i) => [i.name, i.ref]));
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
  return async () => {
    await cluster.stop();
  };
}
