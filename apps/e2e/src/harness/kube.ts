// Client helpers shared by the harness and the suites: the one place in the e2e app that uses
// @kubernetes/client-node (the boundary check allows only packages/kube and this harness), turning
// a kubeconfig path into typed API clients. Suites take client-node's types from here too.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  ApiException,
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  RbacAuthorizationV1Api,
  type V1CustomResourceDefinition,
  VersionApi,
} from '@kubernetes/client-node';
import { waitFor } from './wait.ts';

export {
  DiscoveryV1Api,
  type KubernetesObject,
  loadYaml,
  PolicyV1Api,
  V1MicroTime,
  type V1Pod,
} from '@kubernetes/client-node';

export function loadKubeConfig(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export interface Clients {
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  coordination: CoordinationV1Api;
  apiextensions: ApiextensionsV1Api;
  rbac: RbacAuthorizationV1Api;
  version: VersionApi;
  admission: AdmissionregistrationV1Api;
  /** Custom resources by group/version/plural (status subresource included). */
  custom: CustomObjectsApi;
  /** Generic client for any kind (CRDs included), by apiVersion/kind/metadata. */
  objects: KubernetesObjectApi;
}

export function makeClients(kubeconfig: string | KubeConfig): Clients {
  const kc = typeof kubeconfig === 'string' ? loadKubeConfig(kubeconfig) : kubeconfig;
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    apiextensions: kc.makeApiClient(ApiextensionsV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    version: kc.makeApiClient(VersionApi),
    admission: kc.makeApiClient(AdmissionregistrationV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(kc),
  };
}

/** Clients with the kubeconfig's credentials that impersonate `user` (kubectl --as). */
export function makeClientsAs(kubeconfigPath: string, user: string): Clients {
  const base = loadKubeConfig(kubeconfigPath);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: base.clusters,
    contexts: base.contexts,
    currentContext: base.currentContext,
    users: base.users.map((u) => ({ ...u, impersonateUser: user })),
  });
  return makeClients(kc);
}

/** The HTTP status of a failed API call (ApiException), or undefined for anything else. */
export function statusCode(e: unknown): number | undefined {
  if (e instanceof ApiException) return e.code;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Awaits p and returns the HTTP status it failed with; throws if it succeeded or failed otherwise. */
export async function failureStatus(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (e) {
    const code = statusCode(e);
    if (code !== undefined) return code;
    throw e;
  }
  throw new Error('expected the API call to fail, but it succeeded');
}

export const isNotFound = (e: unknown) => statusCode(e) === 404;

/** Reads every *.yaml / *.yml / *.json file in dir (sorted) as a list of objects. */
export function readManifests(dir: string): KubernetesObject[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /\.(ya?ml|json)$/.test(n));
  } catch {
    return [];
  }
  return names
    .sort()
    .flatMap((n) => loadAllYaml(readFileSync(join(dir, n), 'utf8')) as (KubernetesObject | null)[])
    .filter((o): o is KubernetesObject => !!o && typeof o === 'object' && !!o.kind);
}

/** The API server's message of a failed call (its Status body), else the error's message. */
export function apiMessage(e: unknown): string {
  if (e instanceof ApiException) {
    try {
      const body = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
      if (body && typeof body.message === 'string') return `HTTP ${e.code}: ${body.message}`;
    } catch {
      // not JSON
    }
    return `HTTP ${e.code}`;
  }
  return e instanceof Error ? e.message : String(e);
}

/** Server-side applies objects (field manager claimkit-e2e, forced). */
export async function applyObjects(c: Clients, objs: KubernetesObject[]): Promise<void> {
  for (const o of objs) {
    try {
      await c.objects.patch(o, undefined, undefined, 'claimkit-e2e', true, PatchStrategy.ServerSideApply);
    } catch (e) {
      throw new Error(`applying ${o.kind} ${o.metadata?.name} failed: ${apiMessage(e)}`);
    }
  }
}

/** Applies every manifest in dir and waits until each CRD among them is Established. */
export async function installCrds(c: Clients, dir: string, timeoutMs = 60_000): Promise<string[]> {
  const objs = readManifests(dir);
  await applyObjects(c, objs);
  const crds = objs.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata?.name ?? '');
  await Promise.all(
    crds.map((name) =>
      waitFor(
        `CRD ${name} to be Established`,
        async () => {
          const crd: V1CustomResourceDefinition = await c.apiextensions.readCustomResourceDefinition({
            name,
          });
          return crd.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
        },
        { timeoutMs },
      ),
    ),
  );
  return crds;
}
