// vitest globalSetup of the `e2e` project: one cluster for the whole run (provider from
// CLAIMKIT_E2E_PROVIDER, default local), handed to test files with provide/inject, stopped in
// teardown. The local provider also cleans up on signals and through a watchdog if we are killed.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { makeClients, providerFromEnv, startCluster } from './harness/index.ts';
import type { LocalCluster } from './harness/local.ts';
import type { E2EClusterInfo } from './harness/vitest.ts';

/** helm for the chart test, built (or found in the cache) while the cluster starts, not during tests. */
function buildHelm(): Promise<{ path?: string; error?: string }> {
  const script = fileURLToPath(new URL('../controlplane/build-helm.sh', import.meta.url));
  return new Promise((resolve) => {
    execFile('bash', [script], { timeout: 1_800_000 }, (err, stdout, stderr) => {
      if (err) resolve({ error: `apps/e2e/controlplane/build-helm.sh failed: ${String(err)}\n${stderr}` });
      else resolve({ path: stdout.trim().split('\n').pop() ?? '' });
    });
  });
}

export default async function setup(project: TestProject) {
  const provider = providerFromEnv();
  const t0 = Date.now();
  const helm = buildHelm();
  const cluster = await startCluster(provider);
  project.provide('claimkitHelm', await helm);
  let kubernetesVersion: string;
  if (cluster.provider === 'local') {
    const local = cluster as LocalCluster;
    kubernetesVersion = local.kubernetesVersion;
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
  };
  project.provide('claimkitE2E', info);
  return async () => {
    await cluster.stop();
  };
}
