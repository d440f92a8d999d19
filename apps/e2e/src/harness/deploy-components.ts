// One path from our images to running components, for every provider: the images are built by
// apps/e2e/images/build-images.sh (OCI archives tagged as deploy/ names them,
// ghcr.io/claimkit/<c>:<version>), loaded into the cluster's nodes (the local real node imports
// them with ctr when it starts; kind with `kind load image-archive`), then a component's manifests
// in deploy/<c>/ are applied as `kubectl apply -k` would (server-side apply, the objects of its
// kustomization's resources) and its Deployments are waited for until rolled out.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SYSTEM_NAMESPACE } from '@claimkit/core';
import { type KubernetesObject, loadAllYaml } from '@kubernetes/client-node';
import { applyObjects, type Clients, readManifests } from './kube.ts';
import { repoRoot } from './paths.ts';
import { waitFor } from './wait.ts';

export { SYSTEM_NAMESPACE };

/** Where a component's pods must run (the local real node: its selector and toleration). */
export interface Placement {
  nodeSelector?: Record<string, string>;
  tolerations?: unknown[];
}

/** The objects `kubectl apply -k deploy/<component>` creates (its kustomization's resources, in order). */
export function componentObjects(component: string): KubernetesObject[] {
  const dir = join(repoRoot, 'deploy', component);
  let resources: string[] | undefined;
  try {
    const k = loadAllYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'))[0] as {
      resources?: string[];
    };
    resources = k.resources;
  } catch {
    // no kustomization: every manifest of the directory
  }
  if (!resources) return readManifests(dir);
  return resources.flatMap((r) =>
    (loadAllYaml(readFileSync(join(dir, r), 'utf8')) as (KubernetesObject | null)[]).filter(
      (o): o is KubernetesObject => !!o && typeof o === 'object' && !!o.kind,
    ),
  );
}

/** Adds the placement to every Deployment's pod template (what a user's kustomize patch would do). */
export function placeDeployments(
  objs: KubernetesObject[],
  placement: Placement | undefined,
): KubernetesObject[] {
  if (!placement) return objs;
  return objs.map((o) => {
    if (o.kind !== 'Deployment') return o;
    const copy = structuredClone(o) as KubernetesObject & {
      spec: { template: { spec: Record<string, unknown> } };
    };
    Object.assign(copy.spec.template.spec, placement);
    return copy;
  });
}

/**
 * Applies deploy/<component> (with the placement) and waits until its Deployments in
 * claimkit-system are rolled out: every replica updated, Ready and available. A rollout that does
 * not finish says which pods are not running and why.
 */
export async function deployComponent(
  c: Clients,
  component: string,
  o: { placement?: Placement; timeoutMs?: number; log?: (m: string) => void } = {},
): Promise<KubernetesObject[]> {
  const objs = placeDeployments(componentObjects(component), o.placement);
  await applyObjects(c, objs);
  o.log?.(`applied deploy/${component} (${objs.length} objects)`);
  const names = objs.filter((x) => x.kind === 'Deployment').map((x) => x.metadata?.name ?? '');
  for (const name of names) await deploymentRolledOut(c, SYSTEM_NAMESPACE, name, o.timeoutMs ?? 300_000);
  return objs;
}

/** Waits until the Deployment's current generation is rolled out; the error lists its pods' states. */
export async function deploymentRolledOut(
  c: Clients,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  let pods = '';
  await waitFor(
    `Deployment ${namespace}/${name} rolled out`,
    async () => {
      const d = await c.apps.readNamespacedDeployment({ namespace, name });
      const want = d.spec?.replicas ?? 1;
      const s = d.status ?? {};
      if (
        (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) &&
        s.updatedReplicas === want &&
        s.readyReplicas === want &&
        s.availableReplicas === want &&
        (s.replicas ?? 0) === want
      )
        return true;
      const selector = Object.entries(d.spec?.selector?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const list = await c.core.listNamespacedPod({ namespace, labelSelector: selector });
      pods = list.items
        .map(
          (p) =>
            `${p.metadata?.name} on ${p.spec?.nodeName ?? '(unscheduled)'}: ${p.status?.phase}` +
            (p.status?.containerStatuses ?? [])
              .map((cs) => ` ${cs.name} ${JSON.stringify(cs.state)}`)
              .join(''),
        )
        .join('; ');
      return undefined;
    },
    { timeoutMs, intervalMs: 500 },
  ).catch((e: Error) => {
    throw new Error(`${e.message}; pods: ${pods || 'none'}`);
  });
}
