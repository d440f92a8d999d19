// Helpers for test files of the e2e project (they import vitest; the harness proper does not).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { type Clients, isNotFound, makeClients } from './kube.ts';
import type { ProviderName } from './types.ts';
import { waitFor } from './wait.ts';

/** What global-setup.ts provides to every test file (serializable). */
export interface E2EClusterInfo {
  provider: ProviderName;
  kubeconfigPath: string;
  userKubeconfigPath: string;
  userName: string;
  server: string;
  /** The version the control plane was built with (local provider), else what /version said. */
  kubernetesVersion: string;
  /** The local provider's state directory (pid file, logs): what local-control.ts restarts components by. */
  stateDir?: string;
  /** The local provider's real node (local-node.ts), when the run has one. */
  realNode?: {
    name: string;
    ip: string;
    containerdSocket: string;
    binDir: string;
    kubeletPort: number;
    /** Where the kubelet writes checkpoint archives. */
    checkpointDir: string;
    /** The `criu` the runtime checkpoints with (absent: checkpoints fail). */
    criuDir?: string;
    /** The OCI registry beside the node, which its containerd pulls from (local-node.ts). */
    registry: { host: string; caFile: string; dataDir: string };
    /** The node's `containerRuntimeVersion`, e.g. `containerd://v2.3.7`. */
    runtimeVersion: string;
  };
  /** Why the run has no real node, or why its images are missing (one line). */
  realNodeMissing?: string;
  /** Our images, built here and imported into the real node (name -> ref). */
  images?: Record<string, string>;
  /** The image build failed: the real-node files fail with this instead of skipping. */
  imagesFailed?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    claimkitE2E: E2EClusterInfo;
    /** The helm binary for the chart test, or why it could not be built. */
    claimkitHelm: { path?: string; error?: string };
    /** The promtool binary for the monitoring checks, or why it could not be built. */
    claimkitPromtool: { path?: string; error?: string };
  }
}

/**
 * Declares a suite that needs the real node and our images (`needs`: image names). Where this
 * machine cannot run them (not root, no cgroups, another provider) the suite is skipped with one
 * line saying what is missing; where the images failed to build it fails with the build's error.
 */
export function describeOnRealNode(
  name: string,
  needs: string[],
  body: (node: NonNullable<E2EClusterInfo['realNode']>) => void,
): void {
  const info = e2eCluster();
  if (info.imagesFailed) {
    describe(name, () => {
      it('has the images it runs (their build failed)', () => {
        throw new Error(info.imagesFailed);
      });
    });
    return;
  }
  const lacking = needs.filter((n) => !info.images?.[n]);
  const missing =
    info.realNodeMissing ??
    (info.realNode ? undefined : `the ${info.provider} provider has no real node here`) ??
    (lacking.length > 0 ? `images not built: ${lacking.join(', ')}` : undefined);
  if (missing) {
    process.stderr.write(`[e2e] ${name}: skipped: ${missing}\n`);
    describe.skip(name, () => {
      it(`needs ${missing}`, () => {});
    });
    return;
  }
  describe(name, () => body(info.realNode!));
}

/** The cluster of this test run. */
export function e2eCluster(): E2EClusterInfo {
  const info = inject('claimkitE2E');
  if (!info) throw new Error('no e2e cluster: run this file in the vitest `e2e` project (global-setup.ts)');
  return info;
}

const cache = new Map<string, Clients>();

/**
 * Typed clients for the cluster: 'admin' (cluster-admin) or 'user' (authenticated, no RBAC
 * bindings). This is the one entry point suites use, so an API-model conformance suite can run the
 * same cases against core's in-memory model and against `e2eClients()`.
 */
export function e2eClients(identity: 'admin' | 'user' = 'admin'): Clients {
  const info = e2eCluster();
  const path = identity === 'admin' ? info.kubeconfigPath : info.userKubeconfigPath;
  let c = cache.get(path);
  if (!c) {
    c = makeClients(path);
    cache.set(path, c);
  }
  return c;
}

/** Creates a fresh namespace (ready for pods: its `default` service account exists). */
export async function createTestNamespace(prefix = 'e2e', c: Clients = e2eClients()): Promise<string> {
  const name = `${prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 40)}-${randomBytes(3).toString('hex')}`;
  await c.core.createNamespace({ body: { metadata: { name, labels: { 'claimkit.dev/e2e': 'true' } } } });
  await waitFor(
    `service account default/${name}`,
    () => c.core.readNamespacedServiceAccount({ name: 'default', namespace: name }),
    { timeoutMs: 60_000 },
  );
  return name;
}

/** Deletes a namespace and waits (up to timeoutMs) until it is gone. */
export async function deleteTestNamespace(name: string, c: Clients = e2eClients(), timeoutMs = 60_000) {
  try {
    await c.core.deleteNamespace({ name });
  } catch (e) {
    if (isNotFound(e)) return;
    throw e;
  }
  // What the namespace controller says is holding it up (content remaining, finalizers, a failed
  // discovery): the reason given when it is not gone in time.
  let holdUp = '';
  await waitFor(
    `namespace ${name} to be deleted`,
    async () => {
      try {
        const ns = await c.core.readNamespace({ name });
        holdUp = (ns.status?.conditions ?? [])
          .filter((x) => x.status === 'True')
          .map((x) => `${x.type}: ${x.message}`)
          .join('; ');
        return false;
      } catch (e) {
        if (isNotFound(e)) return true;
        throw e;
      }
    },
    { timeoutMs, intervalMs: 250 },
  ).catch((e: Error) => {
    throw new Error(`${e.message}${holdUp ? ` (namespace conditions: ${holdUp})` : ''}`);
  });
}

/**
 * One namespace per test file: created in beforeAll, deleted in afterAll.
 *   const ns = useTestNamespace('smoke');  ...  ns.name
 */
export function useTestNamespace(prefix = 'e2e'): { readonly name: string } {
  let name = '';
  beforeAll(async () => {
    name = await createTestNamespace(prefix);
  });
  afterAll(async () => {
    if (name) await deleteTestNamespace(name);
  });
  return {
    get name() {
      if (!name) throw new Error('the test namespace is created in beforeAll; read .name inside a test');
      return name;
    },
  };
}
