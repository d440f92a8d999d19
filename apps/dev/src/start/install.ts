// What a real install creates besides the workloads, which `npm start` runs in its own process:
// the claimkit-system namespace, the controller's and the webhook's ServiceAccounts and RBAC, the
// roles for people (deploy/controller, deploy/webhook), and the admission policies (deploy/policies),
// from the same builders. The in-process controller and the webhook's claim index act with those
// ServiceAccounts' tokens, so the policies and the webhook treat everyone else (the admin kubeconfig
// included) as they would in a cluster.
import { join } from 'node:path';
import { controllerManifests } from '@claimkit/controller';
import {
  admissionPolicies,
  DEFAULT_CONTROLLER_SERVICE_ACCOUNT,
  type ManifestFile,
  PODCLAIM_WRITERS,
  POOL_POD_LABELS,
  policiesManifests,
} from '@claimkit/core';
import { applyObjects, type Clients, waitFor, writeServiceAccountKubeconfig } from '@claimkit/e2e/harness';
import { WEBHOOK_NAME, WEBHOOK_NAMESPACE, webhookManifests } from '@claimkit/webhook';
import { badStatePod, podNameWrite } from './probes.ts';

/** Kinds this process stands in for: it runs the workloads itself and registers the webhook by URL. */
const RUN_HERE = new Set([
  'Deployment',
  'Service',
  'Certificate',
  'Issuer',
  'ValidatingWebhookConfiguration',
  'Kustomization',
]);

/** Long enough for a development session; the API server issues it for the ServiceAccount as is. */
const TOKEN_SECONDS = 30 * 24 * 3600;

type Applied = Parameters<typeof applyObjects>[1];
const installable = (files: ManifestFile[]) =>
  files.flatMap((f) => f.objects).filter((o) => !RUN_HERE.has(String(o.kind))) as unknown as Applied;

export interface Identities {
  /** Authenticates as the controller's ServiceAccount (claimkit-system/claimkit-controller). */
  controllerKubeconfig: string;
  /** Its username, the one the policies and the webhook trust. */
  controllerUser: string;
  /** Authenticates as the webhook's ServiceAccount (reads PodClaims for the claim index). */
  webhookKubeconfig: string;
}

/** Applies the namespace, ServiceAccounts, RBAC and user roles; writes a kubeconfig for each account in dir. */
export async function installIdentities(admin: Clients, dir: string): Promise<Identities> {
  await applyObjects(admin, [...installable(controllerManifests()), ...installable(webhookManifests())]);
  const controllerKubeconfig = join(dir, 'controller.kubeconfig');
  const webhookKubeconfig = join(dir, 'webhook.kubeconfig');
  const controllerUser = await writeServiceAccountKubeconfig(
    admin,
    DEFAULT_CONTROLLER_SERVICE_ACCOUNT,
    controllerKubeconfig,
    TOKEN_SECONDS,
  );
  await writeServiceAccountKubeconfig(
    admin,
    { namespace: WEBHOOK_NAMESPACE, name: WEBHOOK_NAME },
    webhookKubeconfig,
    TOKEN_SECONDS,
  );
  return { controllerKubeconfig, controllerUser, webhookKubeconfig };
}

/**
 * Applies deploy/policies and waits until the API server enforces both policies: a write each must
 * refuse is refused by it (the API server runs policies before webhooks, so its message shows).
 */
export async function installPolicies(admin: Clients): Promise<void> {
  await applyObjects(admin, installable(policiesManifests()));
  const names = admissionPolicies();
  const by = (name: keyof typeof names) => `ValidatingAdmissionPolicy '${names[name].policy.metadata.name}'`;
  await waitFor(
    'the API server to enforce the admission policies',
    async () => {
      const [claim, pod] = await Promise.all([podNameWrite(admin), badStatePod(admin)]);
      return !!claim?.includes(by(PODCLAIM_WRITERS)) && !!pod?.includes(by(POOL_POD_LABELS));
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}
