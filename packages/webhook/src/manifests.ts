// The webhook's Kubernetes manifests as data. deploy/webhook/*.yaml is generated from this
// (tools/manifests writes the files and checks they are current), and the e2e suite
// registers the same ValidatingWebhookConfiguration by URL with its own caBundle.
import { GROUP, imageRef, KIND_INFO, type ManifestFile, SYSTEM_NAMESPACE, VERSION } from '@claimkit/core';
import { webhookName } from '@claimkit/core/admission';
import { DEFAULT_CONTROLLER_USERNAME, ROUTES } from './app.ts';

export const WEBHOOK_NAMESPACE = SYSTEM_NAMESPACE;
export const WEBHOOK_NAME = 'claimkit-webhook';
export const WEBHOOK_TLS_SECRET = 'claimkit-webhook-tls';
/** The image the manifests run: the release's, tagged with its version. */
export const WEBHOOK_IMAGE = imageRef('webhook');
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'];

type Obj = Record<string, unknown>;

export type { ManifestFile };

export type ClientConfig =
  | { service: { name: string; namespace: string; path: string; port: number }; caBundle?: string }
  | { url: string; caBundle?: string };

export interface WebhookConfigurationOptions {
  name?: string;
  /** Where the API server calls, per path (in-cluster Service by default). */
  clientConfig?: (path: string) => ClientConfig;
  /** Namespaces never sent to the webhook (the system ones and the webhook's own by default). */
  excludedNamespaces?: string[];
  /** Replaces the namespaceSelector built from excludedNamespaces (e.g. one test namespace). */
  namespaceSelector?: Obj;
  /** `namespace/certificate` for cert-manager's CA injector; omit when the caBundle is given. */
  injectCaFrom?: string;
  timeoutSeconds?: number;
}

const LABELS = { 'app.kubernetes.io/name': 'claimkit', 'app.kubernetes.io/component': 'webhook' };

function serviceClient(path: string): ClientConfig {
  return { service: { name: WEBHOOK_NAME, namespace: WEBHOOK_NAMESPACE, path, port: 443 } };
}

export function validatingWebhookConfiguration(opts: WebhookConfigurationOptions = {}): Obj {
  const client = opts.clientConfig ?? serviceClient;
  const excluded = opts.excludedNamespaces ?? [...SYSTEM_NAMESPACES, WEBHOOK_NAMESPACE];
  const common = (path: string) => ({
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds: opts.timeoutSeconds ?? 5,
    clientConfig: client(path),
    namespaceSelector: opts.namespaceSelector ?? {
      matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: excluded }],
    },
  });
  const webhooks = ROUTES.map((r) => {
    const hook: Obj = {
      name: webhookName(r),
      ...common(r.path),
      rules: [
        {
          apiGroups: [r.group],
          apiVersions: [r.group === '' ? 'v1' : VERSION],
          resources: [...r.resources],
          operations: [...r.operations],
          scope: 'Namespaced',
        },
      ],
    };
    if (r.objectSelector) hook.objectSelector = r.objectSelector;
    return hook;
  });
  const metadata: Obj = { name: opts.name ?? WEBHOOK_NAME, labels: LABELS };
  if (opts.injectCaFrom) metadata.annotations = { 'cert-manager.io/inject-ca-from': opts.injectCaFrom };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata,
    webhooks,
  };
}

/** Every file of deploy/webhook, as objects. */
/** The manifests, running the image of `version` (default: this release's; the generator's bump test sets another). */
export function webhookManifests(o: { version?: string } = {}): ManifestFile[] {
  const meta = (name: string, extra: Obj = {}) => ({
    name,
    namespace: WEBHOOK_NAMESPACE,
    labels: LABELS,
    ...extra,
  });
  const selector = { matchLabels: LABELS };
  const dnsNames = [
    `${WEBHOOK_NAME}.${WEBHOOK_NAMESPACE}.svc`,
    `${WEBHOOK_NAME}.${WEBHOOK_NAMESPACE}.svc.cluster.local`,
  ];
  return [
    {
      file: 'namespace.yaml',
      comment: 'The namespace the webhook runs in (shared with the controller).',
      objects: [
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: WEBHOOK_NAMESPACE, labels: { 'app.kubernetes.io/name': 'claimkit' } },
        },
      ],
    },
    {
      file: 'rbac.yaml',
      comment: 'The webhook reads PodClaims (list/watch) to deny a pod already referenced by another claim.',
      objects: [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(WEBHOOK_NAME) },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: WEBHOOK_NAME, labels: LABELS },
          rules: [{ apiGroups: [GROUP], resources: [KIND_INFO.PodClaim.plural], verbs: ['list', 'watch'] }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: WEBHOOK_NAME, labels: LABELS },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: WEBHOOK_NAME },
          subjects: [{ kind: 'ServiceAccount', name: WEBHOOK_NAME, namespace: WEBHOOK_NAMESPACE }],
        },
      ],
    },
    {
      file: 'deployment.yaml',
      comment:
        'Two replicas and a PodDisruptionBudget: with failurePolicy Fail, no webhook means no writes to claimkit objects or pool pods.',
      objects: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: meta(WEBHOOK_NAME),
          spec: {
            replicas: 2,
            selector,
            template: {
              metadata: { labels: LABELS },
              spec: {
                serviceAccountName: WEBHOOK_NAME,
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: 65532,
                  runAsGroup: 65532,
                  seccompProfile: { type: 'RuntimeDefault' },
                },
                containers: [
                  {
                    name: 'webhook',
                    image: imageRef('webhook', o.version),
                    args: [
                      '--port=8443',
                      '--tls-cert-file=/tls/tls.crt',
                      '--tls-private-key-file=/tls/tls.key',
                      `--controller-users=${DEFAULT_CONTROLLER_USERNAME}`,
                    ],
                    ports: [{ name: 'https', containerPort: 8443, protocol: 'TCP' }],
                    readinessProbe: {
                      httpGet: { path: '/readyz', port: 'https', scheme: 'HTTPS' },
                      periodSeconds: 5,
                    },
                    livenessProbe: {
                      httpGet: { path: '/healthz', port: 'https', scheme: 'HTTPS' },
                      periodSeconds: 10,
                    },
                    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
                    securityContext: {
                      allowPrivilegeEscalation: false,
                      readOnlyRootFilesystem: true,
                      capabilities: { drop: ['ALL'] },
                    },
                    volumeMounts: [{ name: 'tls', mountPath: '/tls', readOnly: true }],
                  },
                ],
                volumes: [{ name: 'tls', secret: { secretName: WEBHOOK_TLS_SECRET } }],
              },
            },
          },
        },
        {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: meta(WEBHOOK_NAME),
          spec: { minAvailable: 1, selector },
        },
      ],
    },
    {
      file: 'service.yaml',
      comment: 'The API server calls the webhook through this Service on 443.',
      objects: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: meta(WEBHOOK_NAME),
          spec: {
            selector: LABELS,
            ports: [{ name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' }],
          },
        },
      ],
    },
    {
      file: 'certificate.yaml',
      comment:
        'Option A (default): cert-manager issues the serving certificate into the Secret and injects its CA into the webhook configuration. For option B (a Secret you provide) leave this file out: see README.md.',
      objects: [
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Issuer',
          metadata: meta(`${WEBHOOK_NAME}-selfsigned`),
          spec: { selfSigned: {} },
        },
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          metadata: meta(WEBHOOK_NAME),
          spec: {
            secretName: WEBHOOK_TLS_SECRET,
            dnsNames,
            duration: '2160h',
            renewBefore: '360h',
            privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
            issuerRef: { kind: 'Issuer', name: `${WEBHOOK_NAME}-selfsigned` },
          },
        },
      ],
    },
    {
      file: 'validatingwebhookconfiguration.yaml',
      comment:
        "failurePolicy Fail, sideEffects None, 5 s timeout; pods only when labelled claimkit.dev/pool; system namespaces and the webhook's own are never sent. The caBundle is injected by cert-manager (annotation); with a provided Secret, set caBundle on every webhook instead.",
      objects: [validatingWebhookConfiguration({ injectCaFrom: `${WEBHOOK_NAMESPACE}/${WEBHOOK_NAME}` })],
    },
    {
      file: 'kustomization.yaml',
      comment: 'kubectl apply -k deploy/webhook (needs cert-manager; see README.md for a provided Secret).',
      objects: [
        {
          apiVersion: 'kustomize.config.k8s.io/v1beta1',
          kind: 'Kustomization',
          resources: [
            'namespace.yaml',
            'rbac.yaml',
            'deployment.yaml',
            'service.yaml',
            'certificate.yaml',
            'validatingwebhookconfiguration.yaml',
          ],
        },
      ],
    },
  ];
}
