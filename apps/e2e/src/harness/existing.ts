// The kubeconfig provider: an existing cluster (KUBECONFIG or ~/.kube/config). Tests only create
// their own namespaces, but they still write to the cluster, so it needs an explicit opt-in.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createTokenIdentity } from './identity.ts';
import { installCrds, makeClients } from './kube.ts';
import { crdDir, runsDir } from './paths.ts';
import type { ClusterHandle } from './types.ts';

export async function useExistingCluster(opts: { crdDir?: string | false } = {}): Promise<ClusterHandle> {
  if (process.env.CLAIMKIT_E2E_ALLOW_EXISTING_CLUSTER !== '1') {
    throw new Error(
      'CLAIMKIT_E2E_PROVIDER=kubeconfig runs the e2e suites against the cluster in KUBECONFIG; they create ' +
        'and delete namespaces, CRDs and objects there. Set CLAIMKIT_E2E_ALLOW_EXISTING_CLUSTER=1 to allow it.',
    );
  }
  const kubeconfigPath = process.env.KUBECONFIG?.split(':')[0] || join(homedir(), '.kube/config');
  const admin = makeClients(kubeconfigPath);
  const version = await admin.version.getCode();
  process.stderr.write(
    `[e2e:kubeconfig] using ${admin.kc.getCurrentCluster()?.server} (${version.gitVersion})\n`,
  );
  const dir = opts.crdDir === false ? undefined : (opts.crdDir ?? crdDir);
  if (dir) await installCrds(admin, dir);
  mkdirSync(runsDir(), { recursive: true });
  const stateDir = mkdtempSync(join(runsDir(), 'kubeconfig-'));
  const identity = await createTokenIdentity(admin, join(stateDir, 'user.kubeconfig'));
  return {
    provider: 'kubeconfig',
    kubeconfigPath,
    userKubeconfigPath: identity.kubeconfigPath,
    userName: identity.userName,
    server: admin.kc.getCurrentCluster()?.server ?? '',
    stop: async () => {
      await identity.remove();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
