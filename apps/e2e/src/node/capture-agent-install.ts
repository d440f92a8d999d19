// The chart's capture agent (captureAgentManifests) installed on the real node for one test file, in
// its namespace, as a user installs it: the DaemonSet in our controller image, with its kubelet
// port and data directory of this run, and the controller's token for the agents' audience. With
// `image` the agent pushes every checkpoint as a checkpoint OCI image to the run's registry (CA from
// a ConfigMap, as the manifests mount it) and reports `image:` refs.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAPTURE_AGENT_AUDIENCE, CAPTURE_AGENT_NAME, captureAgentManifests } from '@claimkit/controller';
import type { Capture, Pod } from '@claimkit/core';
import { CONTROLLER_NAME } from '@claimkit/core';
import { kube, until } from '../controller/helpers.ts';
import { applyObjects, type KubernetesObject, realNodePlacement } from '../harness/index.ts';
import { type E2EClusterInfo, e2eClients, e2eCluster } from '../harness/vitest.ts';
import { unlessNotFound } from './helpers.ts';

type RealNodeInfo = NonNullable<E2EClusterInfo['realNode']>;

export interface InstalledAgent {
  /** The agent's data directory on the node (per file), mounted at the same path in its pod. */
  dataDir: string;
  /** The controller's token for the agents' audience (a file, for startController). */
  tokenFile: string;
  /** `http://<node IP>:8750/v1/captures`. */
  url: string;
  /** The repository images are pushed under (with `image`). */
  imageRepository?: string;
  pods(): Promise<Pod[]>;
  /** Waits for a Ready agent pod (not `notUid`) whose /healthz answers. */
  ready(what: string, notUid?: string): Promise<Pod>;
  /** The last lines every agent pod logged (failure messages). */
  logs(): Promise<string>;
  /** A Capture of pods labelled app=`app` through this agent. */
  httpCapture(name: string, app: string): Capture;
  /** Waits for Captured; a timeout says the Capture's status and what the agent logged. */
  captured(name: string, timeoutMs?: number): Promise<Capture>;
  uninstall(): Promise<void>;
}

/** A pod's phase and its containers' states, for failure messages. */
export function describePod(p: Pod): string {
  const cs = (
    p.status as
      | {
          containerStatuses?: {
            name: string;
            state?: Record<string, { reason?: string; message?: string }>;
          }[];
        }
      | undefined
  )?.containerStatuses;
  const states = (cs ?? [])
    .map((x) => {
      const [k, v] = Object.entries(x.state ?? {})[0] ?? ['?', {}];
      return `${x.name} ${k}${v?.reason ? ` ${v.reason}` : ''}${v?.message ? `: ${v.message.slice(0, 300)}` : ''}`;
    })
    .join(', ');
  return `${p.metadata.name} ${p.status?.phase ?? '?'} [${states}]`;
}

const REGISTRY_CA_CONFIGMAP = 'claimkit-registry-ca';

/** The chart's agent objects, placed on the real node, in `namespace`. */
function agentObjects(
  namespace: string,
  node: RealNodeInfo,
  dataDir: string,
  image: { repository: string } | undefined,
): KubernetesObject[] {
  const files = captureAgentManifests(
    image ? { image: { repository: image.repository, caConfigMap: REGISTRY_CA_CONFIGMAP } } : {},
  );
  const objs = files.flatMap((f) => f.objects) as unknown as (KubernetesObject & {
    metadata: { name: string; namespace?: string };
    subjects?: { namespace?: string }[];
    roleRef?: { name: string };
    spec?: { template: { spec: Record<string, unknown> } };
  })[];
  return objs.map((o) => {
    const x = structuredClone(o);
    if (x.metadata.namespace) x.metadata.namespace = namespace;
    if (x.kind === 'ClusterRole' || x.kind === 'ClusterRoleBinding')
      x.metadata.name = `${x.metadata.name}-${namespace}`;
    if (x.roleRef) x.roleRef.name = `${x.roleRef.name}-${namespace}`;
    for (const s of x.subjects ?? []) s.namespace = namespace;
    if (x.kind === 'DaemonSet') {
      const pod = x.spec!.template.spec as {
        containers: { args: string[]; volumeMounts: { name: string; mountPath: string }[] }[];
        volumes: { name: string; hostPath?: { path: string } }[];
      } & Record<string, unknown>;
      Object.assign(pod, realNodePlacement());
      const agent = pod.containers[0]!;
      // This node's kubelet listens on a port of its own and writes archives under the run's dir.
      agent.args = [
        ...agent.args.filter((a) => !a.startsWith('--store-dir') && !a.startsWith('--state-dir')),
        `--kubelet-port=${node.kubeletPort}`,
        `--store-dir=${dataDir}/archives`,
        `--state-dir=${dataDir}/state`,
      ];
      for (const v of pod.volumes) {
        if (v.name === 'kubelet-checkpoints' && v.hostPath) v.hostPath.path = node.checkpointDir;
        if (v.name === 'data' && v.hostPath) v.hostPath.path = dataDir;
      }
      for (const m of agent.volumeMounts) if (m.name === 'data') m.mountPath = dataDir;
    }
    return x as KubernetesObject;
  });
}

/**
 * Installs the agent in `namespace` on the real node and waits until it answers; gives the
 * controller's ServiceAccount a token for the agents' audience. `image`: push checkpoint images to
 * the run's registry under `<registry>/<path>`.
 */
export async function installCaptureAgent(
  namespace: string,
  node: RealNodeInfo,
  o: { image?: { path: string } } = {},
): Promise<InstalledAgent> {
  const c = () => kube();
  const dataDir = join(e2eCluster().stateDir ?? tmpdir(), `capture-agent-${namespace}`);
  mkdirSync(dataDir, { recursive: true });
  const imageRepository = o.image ? `${node.registry.host}/${o.image.path}` : undefined;
  const extra: KubernetesObject[] = imageRepository
    ? [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: REGISTRY_CA_CONFIGMAP, namespace },
          data: { 'ca.crt': readFileSync(node.registry.caFile, 'utf8') },
        } as KubernetesObject,
      ]
    : [];
  const applied = [
    ...extra,
    ...agentObjects(namespace, node, dataDir, imageRepository ? { repository: imageRepository } : undefined),
  ];
  await applyObjects(e2eClients(), applied);
  const url = `http://${node.ip}:8750/v1/captures`;

  const pods = async () =>
    (
      (await c().list('Pod', { namespace, labelSelector: 'app.kubernetes.io/component=capture-agent' })) as {
        items: Pod[];
      }
    ).items;
  const ready = (what: string, notUid?: string) =>
    until(
      `${what}: the capture agent's pod Ready on ${node.name} (DaemonSet ${CAPTURE_AGENT_NAME})`,
      async () => {
        const ps = await pods();
        const seen = ps.map(describePod).join('; ') || 'none';
        const p = ps.find(
          (x) =>
            x.metadata.uid !== notUid &&
            !x.metadata.deletionTimestamp &&
            x.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True'),
        );
        // Thrown (not returned) so that a timeout says what the pods looked like last.
        if (!p) throw new Error(`pods: ${seen}`);
        const healthy = await fetch(`http://${node.ip}:8750/healthz`).then(
          (r) => r.ok,
          (e: Error) => e.message,
        );
        if (healthy !== true) throw new Error(`GET http://${node.ip}:8750/healthz: ${healthy}`);
        return p;
      },
      120_000,
    );
  const logs = async () =>
    (
      await Promise.all(
        (
          await pods()
        ).map(async (p) => {
          const text = await e2eClients()
            .core.readNamespacedPodLog({ namespace, name: p.metadata.name, tailLines: 30 })
            .catch((x: Error) => `(no log: ${x.message})`);
          return `--- agent pod ${p.metadata.name}:\n${text}`;
        }),
      )
    ).join('\n');
  await ready('installed');

  // The agent accepts only system:serviceaccount:<its namespace>:claimkit-controller, by a token for
  // its audience (the chart's controller has one projected into its pod; an in-process controller
  // gets one by TokenRequest).
  const core = e2eClients().core;
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: CONTROLLER_NAME } } });
  const tr = await core.createNamespacedServiceAccountToken({
    namespace,
    name: CONTROLLER_NAME,
    body: { spec: { audiences: [CAPTURE_AGENT_AUDIENCE], expirationSeconds: 3600 } },
  });
  const tokenFile = join(dataDir, 'controller-token');
  writeFileSync(tokenFile, tr.status?.token ?? '');

  return {
    dataDir,
    tokenFile,
    url,
    ...(imageRepository ? { imageRepository } : {}),
    pods,
    ready,
    logs,
    httpCapture: (name, app) =>
      ({
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'Capture',
        metadata: { name, namespace },
        spec: {
          selector: { matchLabels: { app } },
          container: 'main',
          leaseSeconds: 300,
          timeoutSeconds: 120,
          maxAttempts: 3,
          backend: { type: 'Http', url: 'http://{nodeIP}:8750/v1/captures' },
        },
      }) as Capture,
    async captured(name, timeoutMs = 90_000) {
      try {
        return await until(
          `Capture ${name} Captured`,
          async () => {
            const cap = (await c().get('Capture', { namespace, name })) as Capture;
            if (cap.status?.phase === 'Failed')
              return Promise.reject(new Error(`Failed: ${JSON.stringify(cap.status)}`));
            if (cap.status?.phase !== 'Captured')
              throw new Error(`status: ${JSON.stringify(cap.status ?? {})}`);
            return cap;
          },
          timeoutMs,
        );
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${await logs()}`);
      }
    },
    async uninstall() {
      const { objects } = e2eClients();
      for (const x of [...applied].reverse()) await unlessNotFound(objects.delete(x));
    },
  };
}
