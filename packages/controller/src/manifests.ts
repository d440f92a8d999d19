// The controller's Kubernetes manifests as data. deploy/controller/*.yaml is generated from this
// (tools/manifests writes the files and checks they are current).
import { CONTROLLER_NAME, GROUP, imageRef, KIND_INFO, type ManifestFile } from '@claimkit/core';

export const CONTROLLER_NAMESPACE = 'claimkit-system';
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
    '--concurrency=4',
    '--sweep-interval=30s',
    '--log-level=info',
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
