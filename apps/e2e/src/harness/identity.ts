// A non-admin identity on a cluster we do not own the CA of (kind, an existing cluster): a
// ServiceAccount with no RBAC bindings and a short-lived token from the TokenRequest API. Suites
// also use the kubeconfig writer to act as a given ServiceAccount (e.g. the controller's).
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { type Clients, isNotFound } from './kube.ts';

export interface TokenIdentity {
  kubeconfigPath: string;
  userName: string;
  namespace: string;
  remove(): Promise<void>;
}

function clusterBlock(kc: KubeConfig): string[] {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const ca = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  return [
    `    server: ${cluster.server}`,
    ...(ca ? [`    certificate-authority-data: ${ca}`] : []),
    ...(cluster.skipTLSVerify ? ['    insecure-skip-tls-verify: true'] : []),
  ];
}

/**
 * Writes a kubeconfig at `path` that authenticates as an existing ServiceAccount, with a token from
 * the TokenRequest API (what a pod running as that ServiceAccount gets).
 */
export async function writeServiceAccountKubeconfig(
  admin: Clients,
  sa: { namespace: string; name: string },
  path: string,
  expirationSeconds = 6 * 3600,
): Promise<string> {
  const tr = await admin.core.createNamespacedServiceAccountToken({
    name: sa.name,
    namespace: sa.namespace,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  const token = tr.status?.token;
  if (!token) throw new Error('TokenRequest returned no token');
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: claimkit-e2e',
    '  cluster:',
    ...clusterBlock(admin.kc),
    'users:',
    `- name: ${sa.name}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: claimkit-e2e',
    '  context:',
    '    cluster: claimkit-e2e',
    `    user: ${sa.name}`,
    'current-context: claimkit-e2e',
    '',
  ].join('\n');
  writeFileSync(path, text, { mode: 0o600 });
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

export async function createTokenIdentity(admin: Clients, path: string): Promise<TokenIdentity> {
  const namespace = `claimkit-e2e-identity-${randomBytes(3).toString('hex')}`;
  const name = 'claimkit-e2e-user';
  await admin.core.createNamespace({
    body: { metadata: { name: namespace, labels: { 'claimkit.dev/e2e': 'true' } } },
  });
  await admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const userName = await writeServiceAccountKubeconfig(admin, { namespace, name }, path);
  return {
    kubeconfigPath: path,
    userName,
    namespace,
    remove: async () => {
      try {
        await admin.core.deleteNamespace({ name: namespace });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    },
  };
}
