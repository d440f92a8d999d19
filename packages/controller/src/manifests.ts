// The controller's Kubernetes manifests as data. deploy/controller/*.yaml is generated from this
// (tools/manifests writes the files and checks they are current).

import {
  CAPTURE_AGENT_PORT,
  CONTROLLER_NAME,
  GROUP,
  imageRef,
  KIND_INFO,
  type ManifestFile,
  SYSTEM_NAMESPACE,
} from '@claimkit/core';
import { formatDuration } from '@claimkit/core/options';
import { CAPTURE_AGENT_AUDIENCE } from './agent/auth.ts';
import { CONTROLLER_DEFAULTS } from './defaults.ts';

export const CONTROLLER_NAMESPACE = SYSTEM_NAMESPACE;
/** The image the manifests run: the release's, tagged with its version. */
export const CONTROLLER_IMAGE = imageRef('controller');
export const METRICS_PORT = 8080;
export const HEALTH_PORT = 8081;
/** The controller's container (its name is also in $CONTAINER_NAME: the leader records it on the Lease). */
export const CONTROLLER_CONTAINER = 'controller';

type Obj = Record<string, unknown>;

export type { ManifestFile };

const LABELS = { 'app.kubernetes.io/name': 'claimkit', 'app.kubernetes.io/component': 'controller' };
const meta = (name: string) => ({ name, namespace: CONTROLLER_NAMESPACE, labels: LABELS });
const plural = (k: 'Capture' | 'PodPool' | 'PodClaim' | 'PodClaimSet') => KIND_INFO[k].plural;

/** What the controller does with each resource (ClusterRole rules). */
export function controllerRules(): Obj[] {
  const crds = [plural('Capture'), plural('PodPool'), plural('PodClaim'), plural('PodClaimSet')];
  return [
    {
      apiGroups: [GROUP],
      resources: crds,
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    { apiGroups: [GROUP], resources: crds.map((r) => `${r}/status`), verbs: ['get', 'update', 'patch'] },
    {
      apiGroups: [GROUP],
      resources: [`${plural('PodClaimSet')}/scale`, `${plural('PodPool')}/scale`],
      verbs: ['get', 'update', 'patch'],
    },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    // Pools bind only pods on Ready, uncordoned nodes, and replace Idle pods stranded elsewhere.
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
    // spec.disruptionBudget: the PodDisruptionBudget a pool owns for its Bound pods.
    {
      apiGroups: ['policy'],
      resources: ['poddisruptionbudgets'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    // Kubelet capture backend: ContainerCheckpoint through the API server's node proxy.
    { apiGroups: [''], resources: ['nodes/proxy'], verbs: ['create', 'get'] },
    // Claims and pool pods carry owner references with blockOwnerDeletion; clusters running the
    // OwnerReferencesPermissionEnforcement admission plugin (OpenShift) require this to create them.
    {
      apiGroups: [GROUP],
      resources: [`${plural('PodClaimSet')}/finalizers`, `${plural('PodPool')}/finalizers`],
      verbs: ['update'],
    },
  ];
}

/** ClusterRoles for people and for External capture holders (they do not run the controller's code). */
export function userRoles(): Obj[] {
  const crds = [plural('Capture'), plural('PodPool'), plural('PodClaim'), plural('PodClaimSet')];
  const role = (name: string, aggregate: string[], rules: Obj[]) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name,
      labels: {
        ...LABELS,
        ...Object.fromEntries(aggregate.map((a) => [`rbac.authorization.k8s.io/aggregate-to-${a}`, 'true'])),
      },
    },
    rules,
  });
  return [
    role(
      'claimkit-edit',
      ['edit', 'admin'],
      [
        {
          apiGroups: [GROUP],
          resources: crds,
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
        },
        {
          apiGroups: [GROUP],
          resources: [`${plural('PodClaimSet')}/scale`, `${plural('PodPool')}/scale`],
          verbs: ['get', 'update', 'patch'],
        },
      ],
    ),
    role(
      'claimkit-view',
      ['view'],
      [
        {
          apiGroups: [GROUP],
          resources: [...crds, ...crds.map((r) => `${r}/status`)],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    ),
    // Bind with a RoleBinding in the Capture's namespace to the ServiceAccount of the holder pods.
    role(
      'claimkit-capture-holder',
      [],
      [
        { apiGroups: [GROUP], resources: [plural('Capture')], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [GROUP], resources: [`${plural('Capture')}/status`], verbs: ['get', 'update', 'patch'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      ],
    ),
  ];
}

/** The manifests, running the image of `version` (default: this release's; the generator's bump test sets another). */
export function controllerManifests(o: { version?: string } = {}): ManifestFile[] {
  const args = [
    '--leader-elect',
    `--lease-namespace=${CONTROLLER_NAMESPACE}`,
    `--metrics-addr=:${METRICS_PORT}`,
    `--health-addr=:${HEALTH_PORT}`,
    // The shipped defaults (the binary's options table), written out so the Deployment shows them.
    `--concurrency=${CONTROLLER_DEFAULTS.concurrency}`,
    `--max-concurrency=${CONTROLLER_DEFAULTS.maxConcurrency}`,
    `--sweep-interval=${formatDuration(CONTROLLER_DEFAULTS.sweepInterval)}`,
    `--log-level=${CONTROLLER_DEFAULTS.logLevel}`,
    `--capture-agent-token-file=${CAPTURE_AGENT_TOKEN_DIR}/token`,
  ];
  return [
    {
      file: 'namespace.yaml',
      comment: 'The namespace the controller runs in (shared with the webhook).',
      objects: [
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: CONTROLLER_NAMESPACE, labels: { 'app.kubernetes.io/name': 'claimkit' } },
        },
      ],
    },
    {
      file: 'rbac.yaml',
      comment:
        'The controller reconciles the four claimkit kinds (and their status and scale), manages pool pods, records Events, elects a leader on a Lease in its namespace (watching the leader pod there), and checkpoints containers through nodes/proxy for the Kubelet capture backend.',
      objects: [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(CONTROLLER_NAME) },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: CONTROLLER_NAME, labels: LABELS },
          rules: controllerRules(),
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: CONTROLLER_NAME, labels: LABELS },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CONTROLLER_NAME },
          subjects: [{ kind: 'ServiceAccount', name: CONTROLLER_NAME, namespace: CONTROLLER_NAMESPACE }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: meta(`${CONTROLLER_NAME}-leader-election`),
          rules: [
            {
              apiGroups: ['coordination.k8s.io'],
              resources: ['leases'],
              verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'],
            },
            // A standby watches the leader's pod (and each replica its own) to take over at once
            // when it is dead; the ClusterRole grants this too, this Role keeps it in a namespaced install.
            { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
          ],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: meta(`${CONTROLLER_NAME}-leader-election`),
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'Role',
            name: `${CONTROLLER_NAME}-leader-election`,
          },
          subjects: [{ kind: 'ServiceAccount', name: CONTROLLER_NAME, namespace: CONTROLLER_NAMESPACE }],
        },
      ],
    },
    {
      file: 'deployment.yaml',
      comment:
        'Two replicas with --leader-elect: only the leader runs workers (efficiency); a standby takes over at once when the leader pod or container is dead (it watches the leader pod), else within the lease duration. Safety never depends on it.',
      objects: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: meta(CONTROLLER_NAME),
          spec: {
            replicas: 2,
            selector: { matchLabels: LABELS },
            template: {
              metadata: { labels: LABELS },
              spec: {
                serviceAccountName: CONTROLLER_NAME,
                terminationGracePeriodSeconds: 30,
                // A numeric user: the kubelet cannot verify runAsNonRoot for a named one (USER node).
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: 65532,
                  runAsGroup: 65532,
                  seccompProfile: { type: 'RuntimeDefault' },
                },
                containers: [
                  {
                    name: CONTROLLER_CONTAINER,
                    image: imageRef('controller', o.version),
                    args,
                    // Who this replica is: the leader records its pod, UID and container on the Lease
                    // so a standby takes over at once when that pod or container is dead.
                    env: [
                      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                      { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
                      { name: 'CONTAINER_NAME', value: CONTROLLER_CONTAINER },
                    ],
                    ports: [
                      { name: 'metrics', containerPort: METRICS_PORT },
                      { name: 'health', containerPort: HEALTH_PORT },
                    ],
                    livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, periodSeconds: 10 },
                    readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5 },
                    resources: {
                      requests: { cpu: '100m', memory: '128Mi' },
                      limits: { memory: '512Mi' },
                    },
                    securityContext: {
                      allowPrivilegeEscalation: false,
                      readOnlyRootFilesystem: true,
                      capabilities: { drop: ['ALL'] },
                    },
                    volumeMounts: [
                      { name: 'capture-agent-token', mountPath: CAPTURE_AGENT_TOKEN_DIR, readOnly: true },
                    ],
                  },
                ],
                // What the capture agents (started with --allowed-callers) accept: this pod's
                // ServiceAccount, in a token only for their audience (never the API server's).
                volumes: [
                  {
                    name: 'capture-agent-token',
                    projected: {
                      sources: [
                        {
                          serviceAccountToken: {
                            audience: CAPTURE_AGENT_AUDIENCE,
                            expirationSeconds: 3600,
                            path: 'token',
                          },
                        },
                      ],
                    },
                  },
                ],
              },
            },
          },
        },
      ],
    },
    {
      file: 'user-roles.yaml',
      comment:
        'Roles for people and holders, not for the controller: claimkit-edit and claimkit-view aggregate into the built-in admin, edit and view roles; claimkit-capture-holder is what an External-backend holder needs for claimctl capture acquire|renew|complete|fail (bind it with a RoleBinding in the Capture namespace to the holder pods ServiceAccount).',
      objects: userRoles(),
    },
    {
      file: 'service.yaml',
      comment: 'Prometheus scrapes /metrics here.',
      objects: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: meta(`${CONTROLLER_NAME}-metrics`),
          spec: {
            selector: LABELS,
            ports: [{ name: 'metrics', port: METRICS_PORT, targetPort: 'metrics' }],
          },
        },
      ],
    },
    {
      file: 'kustomization.yaml',
      comment: 'kubectl apply -k deploy/controller (after deploy/crds).',
      objects: [
        {
          apiVersion: 'kustomize.config.k8s.io/v1beta1',
          kind: 'Kustomization',
          resources: ['namespace.yaml', 'rbac.yaml', 'user-roles.yaml', 'deployment.yaml', 'service.yaml'],
        },
      ],
    },
  ];
}

/** The reference capture agent's DaemonSet (optional: the Helm chart's `captureAgent.enabled`). */
export const CAPTURE_AGENT_NAME = 'claimkit-capture-agent';
export const CAPTURE_AGENT_CONTAINER = 'capture-agent';
/** Where the controller's token for the capture agents' audience is mounted. */
export const CAPTURE_AGENT_TOKEN_DIR = '/var/run/secrets/claimkit.dev/capture-agent';

/** The node port every agent serves the Http capture protocol on (hostPort = containerPort): core's. */
export { CAPTURE_AGENT_PORT };
/** The kubelet's checkpoint directory on the node (`<kubelet root dir>/checkpoints`). */
export const CAPTURE_AGENT_KUBELET_CHECKPOINT_DIR = '/var/lib/kubelet/checkpoints';
/** The agent's directory on the node: `state/` (its state file) and `archives/` (the stored checkpoints). */
export const CAPTURE_AGENT_DATA_DIR = '/var/lib/claimkit-agent';

/** Where `image.caConfigMap`'s key ca.crt and `image.authSecret`'s .dockerconfigjson are mounted. */
export const CAPTURE_AGENT_REGISTRY_CA_DIR = '/etc/claimkit/registry-ca';
export const CAPTURE_AGENT_REGISTRY_AUTH_DIR = '/etc/claimkit/registry-auth';

/** The capture agent's checkpoint image push (`--image-repository`; absent: no push). */
export interface CaptureAgentImageOptions {
  /** `host[:port]/path` the agent pushes `<path>/<namespace>-<capture>:<token>` to. */
  repository: string;
  /** A ConfigMap whose key ca.crt is the registry's CA bundle (--registry-ca). */
  caConfigMap?: string;
  /** A kubernetes.io/dockerconfigjson Secret with the registry's credentials (--registry-auth-file). */
  authSecret?: string;
}

const AGENT_LABELS = { 'app.kubernetes.io/name': 'claimkit', 'app.kubernetes.io/component': 'capture-agent' };

/**
 * What the agent asks its kubelet: the pod list (GET /pods) and the checkpoint (POST /checkpoint/…).
 * A kubelet with fine-grained authorization (1.33+, as the e2e's 1.37 showed: `create nodes/checkpoint`
 * is what it asks for /checkpoint, with no fallback) authorizes them as nodes/pods get and
 * nodes/checkpoint create, so the agent never needs nodes/proxy (all of a kubelet's API, exec
 * included). An older kubelet authorizes both as nodes/proxy: add it there by hand.
 */
export function captureAgentRules(): Obj[] {
  return [
    { apiGroups: [''], resources: ['nodes/pods'], verbs: ['get'] },
    { apiGroups: [''], resources: ['nodes/checkpoint'], verbs: ['create'] },
    // Who is asking (agent/auth.ts: --allowed-callers).
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  ];
}

/**
 * The capture agent as a DaemonSet (one per node, `hostPort` 8750, so a Capture's backend is
 * `http://{nodeName}:8750/v1/captures`), with its ServiceAccount and RBAC. It runs the controller's
 * image (which carries the agent: `node /app/dist/agent/main.js`) as root, because it reads and
 * moves the kubelet's checkpoint archives; both host directories are mounted at their node paths,
 * so the paths in its refs are the node's. Not part of deploy/controller: only the chart installs
 * it (`captureAgent.enabled`).
 */
export function captureAgentManifests(
  o: { version?: string; image?: CaptureAgentImageOptions } = {},
): ManifestFile[] {
  const meta = (name: string) => ({ name, namespace: CONTROLLER_NAMESPACE, labels: AGENT_LABELS });
  // Without `image` nothing below changes the output (the generated files are compared).
  const image = o.image;
  const args = [
    `--listen=0.0.0.0:${CAPTURE_AGENT_PORT}`,
    '--capture=kubelet',
    `--checkpoint-dir=${CAPTURE_AGENT_KUBELET_CHECKPOINT_DIR}`,
    `--store-dir=${CAPTURE_AGENT_DATA_DIR}/archives`,
    `--state-dir=${CAPTURE_AGENT_DATA_DIR}/state`,
    // Kubelets often serve a self-signed certificate (as metrics-server's --kubelet-insecure-tls).
    '--kubelet-insecure-tls',
    // Only the controller of this namespace (its projected token for the agent's audience).
    `--allowed-callers=system:serviceaccount:$(POD_NAMESPACE):${CONTROLLER_NAME}`,
    ...(image
      ? [
          `--image-repository=${image.repository}`,
          ...(image.caConfigMap ? [`--registry-ca=${CAPTURE_AGENT_REGISTRY_CA_DIR}/ca.crt`] : []),
          ...(image.authSecret
            ? [`--registry-auth-file=${CAPTURE_AGENT_REGISTRY_AUTH_DIR}/config.json`]
            : []),
        ]
      : []),
  ];
  const imageMounts = [
    ...(image?.caConfigMap
      ? [{ name: 'registry-ca', mountPath: CAPTURE_AGENT_REGISTRY_CA_DIR, readOnly: true }]
      : []),
    ...(image?.authSecret
      ? [{ name: 'registry-auth', mountPath: CAPTURE_AGENT_REGISTRY_AUTH_DIR, readOnly: true }]
      : []),
  ];
  const imageVolumes = [
    ...(image?.caConfigMap
      ? [
          {
            name: 'registry-ca',
            configMap: { name: image.caConfigMap, items: [{ key: 'ca.crt', path: 'ca.crt' }] },
          },
        ]
      : []),
    ...(image?.authSecret
      ? [
          {
            name: 'registry-auth',
            secret: {
              secretName: image.authSecret,
              items: [{ key: '.dockerconfigjson', path: 'config.json' }],
            },
          },
        ]
      : []),
  ];
  return [
    {
      file: 'rbac.yaml',
      comment:
        "The capture agent's identity: its kubelet authorizes GET /pods as nodes/pods get and POST /checkpoint as nodes/checkpoint create.",
      objects: [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(CAPTURE_AGENT_NAME) },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: CAPTURE_AGENT_NAME, labels: AGENT_LABELS },
          rules: captureAgentRules(),
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: CAPTURE_AGENT_NAME, labels: AGENT_LABELS },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CAPTURE_AGENT_NAME },
          subjects: [{ kind: 'ServiceAccount', name: CAPTURE_AGENT_NAME, namespace: CONTROLLER_NAMESPACE }],
        },
      ],
    },
    {
      file: 'daemonset.yaml',
      comment:
        "One capture agent per node on hostPort 8750: it checkpoints a Capture holder's container through its node's kubelet and keeps the archive under /var/lib/claimkit-agent/archives.",
      objects: [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          metadata: meta(CAPTURE_AGENT_NAME),
          spec: {
            selector: { matchLabels: AGENT_LABELS },
            template: {
              metadata: { labels: AGENT_LABELS },
              spec: {
                serviceAccountName: CAPTURE_AGENT_NAME,
                terminationGracePeriodSeconds: 30,
                // Root: the kubelet's archives are root's (no other capability is needed: the
                // files it reads, moves and writes are all root's own).
                securityContext: {
                  runAsNonRoot: false,
                  runAsUser: 0,
                  runAsGroup: 0,
                  seccompProfile: { type: 'RuntimeDefault' },
                },
                containers: [
                  {
                    name: CAPTURE_AGENT_CONTAINER,
                    image: imageRef('controller', o.version),
                    command: ['node', '/app/dist/agent/main.js'],
                    args,
                    // The kubelet to call ($NODE_IP) and the node named in refs ($NODE_NAME).
                    env: [
                      { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
                      { name: 'NODE_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
                      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                    ],
                    ports: [
                      { name: 'http', containerPort: CAPTURE_AGENT_PORT, hostPort: CAPTURE_AGENT_PORT },
                    ],
                    livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10 },
                    readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
                    resources: {
                      requests: { cpu: '10m', memory: '64Mi' },
                      limits: { memory: '256Mi' },
                    },
                    securityContext: {
                      allowPrivilegeEscalation: false,
                      readOnlyRootFilesystem: true,
                      capabilities: { drop: ['ALL'] },
                    },
                    volumeMounts: [
                      { name: 'kubelet-checkpoints', mountPath: CAPTURE_AGENT_KUBELET_CHECKPOINT_DIR },
                      { name: 'data', mountPath: CAPTURE_AGENT_DATA_DIR },
                      ...imageMounts,
                    ],
                  },
                ],
                volumes: [
                  {
                    name: 'kubelet-checkpoints',
                    hostPath: { path: CAPTURE_AGENT_KUBELET_CHECKPOINT_DIR, type: 'DirectoryOrCreate' },
                  },
                  { name: 'data', hostPath: { path: CAPTURE_AGENT_DATA_DIR, type: 'DirectoryOrCreate' } },
                  ...imageVolumes,
                ],
              },
            },
          },
        },
      ],
    },
  ];
}
