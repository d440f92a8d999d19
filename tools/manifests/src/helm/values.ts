// The Helm chart's own files: Chart.yaml (its version and appVersion are the release's), the values a
// user sets (values.yaml) and the schema Helm checks them against (values.schema.json).
import {
  CAPTURE_AGENT_DATA_DIR,
  CAPTURE_AGENT_KUBELET_CHECKPOINT_DIR,
  CAPTURE_AGENT_REGISTRY_AUTH_DIR,
  CAPTURE_AGENT_REGISTRY_CA_DIR,
  CONTROLLER_DEFAULTS,
  CONTROLLER_OPTIONS,
  IMAGE_NAME_MAX,
} from '@claimkit/controller';
import { DEFAULT_CONTROLLER_SERVICE_ACCOUNT, imageRepository, MAX_SHARDS, toYaml } from '@claimkit/core';
import { WEBHOOK_TLS_SECRET } from '@claimkit/webhook';
import { RULE_DEFAULTS } from '../monitoring/rules.ts';

export const CHART_NAME = 'claimkit';

export function chartYaml(version: string): string {
  return `apiVersion: v2
name: ${CHART_NAME}
description: Safe claims on Kubernetes - capture-once claims with fencing tokens, and warm pod pools with claims that own their pods (controller, admission webhook, admission policies, CRDs).
type: application
version: ${version}
appVersion: "${version}"
keywords: [claims, pools, leases, fencing, operator]
`;
}

/** The defaults the chart's values take from the manifests, so that by default it renders deploy/. */
export interface ValuesDefaults {
  controllerResources: Record<string, unknown>;
  webhookResources: Record<string, unknown>;
  captureAgentResources: Record<string, unknown>;
}

/** `value` as YAML under a key at `indent` spaces. */
const nested = (value: Record<string, unknown>, indent: number) =>
  toYaml(value)
    .trimEnd()
    .split('\n')
    .map((l) => `${' '.repeat(indent)}${l}`)
    .join('\n');

/** Scheduling and pod metadata, the same for each component. */
const POD_VALUES = `  # Merged into the pod template's annotations and labels (the selector's labels stay).
  podAnnotations: {}
  podLabels: {}
  nodeSelector: {}
  tolerations: []
  affinity: {}`;

export function valuesYaml(d: ValuesDefaults): string {
  return `# Which components to install. The CRDs (crds/) are always installed by Helm.
controller:
  enabled: true
  image:
    repository: ${imageRepository('controller')}
    # Default: the chart's appVersion.
    tag: ""
    pullPolicy: IfNotPresent
  # With --leader-elect only the leader runs workers; safety never depends on it.
  replicas: 2
  # More than one: that many Deployments (claimkit-controller-shard-<i>, each with these replicas and its
  # own Lease), each reconciling the pools that hash to it (--shard i/shards) or are pinned to it
  # (PodPool annotation claimkit.dev/shard); for more than one core of reconciles and writes. Every
  # shard still watches everything.
  shards: 1
  concurrency: ${CONTROLLER_DEFAULTS.concurrency}
  # Workers while the queue backs up (a key waited 100 ms: one more, until the queue is empty); at most
  # concurrency keeps the workers fixed.
  maxConcurrency: ${CONTROLLER_DEFAULTS.maxConcurrency}
  logLevel: ${CONTROLLER_DEFAULTS.logLevel}
  # OTLP/HTTP endpoint for traces (one per claim, create to Bound); empty: tracing off.
  otlpEndpoint: ""
  # --disable-claim-events: no Normal Events about PodClaims (Pending, Bound, ...: a write each per
  # claim); Warnings and Events on other kinds are still written.
  disableClaimEvents: ${CONTROLLER_DEFAULTS.disableClaimEvents}
  # More flags for claimkit-controller (see its --help), e.g. ["--pool-coalesce=250ms"].
  extraArgs: []
  resources:
${nested(d.controllerResources, 4)}
${POD_VALUES}

webhook:
  enabled: true
  image:
    repository: ${imageRepository('webhook')}
    tag: ""
    pullPolicy: IfNotPresent
  replicas: 2
  # The Secret the serving certificate is read from.
  tlsSecretName: ${WEBHOOK_TLS_SECRET}
  certManager:
    # cert-manager issues the certificate and injects its CA into the webhook configuration.
    enabled: true
  # Without cert-manager: the base64 PEM CA that signed the certificate in tlsSecretName.
  caBundle: ""
  resources:
${nested(d.webhookResources, 4)}
${POD_VALUES}

# The reference capture agent (claimkit-capture-agent), one per node: serves the Http capture backend
# on each node's port 8750 (hostPort; a Capture's spec.backend.url http://{nodeName}:8750/v1/captures)
# and checkpoints the holder's container through its node's kubelet (ContainerCheckpoint; the
# kubelet's ContainerCheckpoint feature must be on). Runs the controller's image (controller.image),
# as root: it reads and moves the kubelet's checkpoint archives. RBAC: get nodes/pods, create nodes/checkpoint.
captureAgent:
  enabled: false
  # The kubelet's checkpoint directory on the node (<kubelet root dir>/checkpoints).
  kubeletCheckpointDir: ${CAPTURE_AGENT_KUBELET_CHECKPOINT_DIR}
  # The agent's directory on the node: state/ (fencing tokens and jobs) and archives/ (the checkpoints).
  dataDir: ${CAPTURE_AGENT_DATA_DIR}
  # Kubelets often serve a self-signed certificate: do not verify it (as metrics-server's flag).
  kubeletInsecureTLS: true
  # Push each checkpoint as a checkpoint OCI image to <repository>/<namespace>-<capture>:<token> and
  # report image:<repository>@sha256:<manifest digest> as the Capture's ref, which a pool's pods on
  # any node restore from (the nodes pull it: their runtime must reach and trust the registry).
  checkpointImages:
    # HOST[:PORT]/PATH (--image-repository), e.g. registry.example.com/claimkit. Empty: no push
    # (checkpoint:// refs; the archive stays on its node).
    repository: ""
    # A ConfigMap whose key ca.crt is the registry's PEM CA bundle (--registry-ca; mounted at
    # ${CAPTURE_AGENT_REGISTRY_CA_DIR}). Empty: the system's CAs.
    caConfigMap: ""
    # A kubernetes.io/dockerconfigjson Secret with the registry's credentials (--registry-auth-file;
    # mounted at ${CAPTURE_AGENT_REGISTRY_AUTH_DIR}). Empty: anonymous.
    authSecret: ""
    # Do not verify the registry's certificate (--registry-insecure-tls; not with caConfigMap).
    insecureTLS: false
    # http, not https (--registry-plain-http): a local or test registry.
    plainHTTP: false
  resources:
${nested(d.captureAgentResources, 4)}
${POD_VALUES}

# Secrets for pulling the images (all components), after global.imagePullSecrets: [{name: regcred}].
imagePullSecrets: []

# ValidatingAdmissionPolicies (Kubernetes 1.30 or newer), enforced by the API server itself: only the
# controller's identity writes a PodClaim's binding (status.podName, nodeName, podUID, sourcePod); pool pods are never
# relabelled from one claim to another in one write and keep state and claim labels consistent.
policies:
  enabled: true
  # The ServiceAccount the controller runs as. Default namespace: the release's.
  controllerServiceAccount:
    namespace: ""
    name: ${DEFAULT_CONTROLLER_SERVICE_ACCOUNT.name}
  # More usernames, and groups, with the controller's right (e.g. a controller outside the cluster).
  controllerUsers: []
  controllerGroups: []

# Monitoring (each off by default; ServiceMonitor, PodMonitor and PrometheusRule need the Prometheus
# Operator's CRDs). The scrape configs keep the metrics' own namespace and pool labels (honorLabels).
monitoring:
  # One ServiceMonitor each for the controller (port metrics) and the webhook (port https, /metrics).
  serviceMonitor:
    enabled: false
    # Added to the ServiceMonitors' labels (e.g. what your Prometheus's serviceMonitorSelector wants).
    labels: {}
    interval: 30s
    scrapeTimeout: ""
  # Or PodMonitors, scraping the pods directly (no Service needed).
  podMonitor:
    enabled: false
    labels: {}
    interval: 30s
    scrapeTimeout: ""
  # The webhook's scrape tlsConfig. Empty: the CA in webhook.tlsSecretName's ca.crt with
  # cert-manager, else no verification.
  webhookTLSConfig: {}
  # The alerts (docs/operate.md says what each means and what to do).
  prometheusRule:
    enabled: false
    labels: {}
    # ClaimkitClaimsPendingTooLong: a claim Pending longer than this many seconds.
    pendingSeconds: ${RULE_DEFAULTS.pendingSeconds}
    # ClaimkitPoolExhausted: a pool at maxPods with claims Pending for this long.
    exhaustedFor: ${RULE_DEFAULTS.exhaustedFor}
    # ClaimkitBindLatencyHigh: the claim -> Bound p99 of a pool over this many seconds (for 15m).
    bindP99Seconds: ${RULE_DEFAULTS.bindP99Seconds}
    # ClaimkitNoLeader: no controller replica leading for this long.
    noLeaderFor: ${RULE_DEFAULTS.noLeaderFor}
    # ClaimkitDoctorFindings: a doctor finding present for this long.
    doctorFor: ${RULE_DEFAULTS.doctorFor}
    # ClaimkitReconcileErrors: the fraction of reconciles ending in an error (for 15m).
    reconcileErrorRatio: ${RULE_DEFAULTS.reconcileErrorRatio}
    # ClaimkitWebhookErrors: the fraction of admission requests answered with an error (for 5m).
    webhookErrorRatio: ${RULE_DEFAULTS.webhookErrorRatio}
  # The Grafana dashboard as a ConfigMap (claimkit-dashboard) for Grafana's dashboard sidecar.
  dashboard:
    enabled: false
    # Default: the release's namespace.
    namespace: ""
    # The label the sidecar looks for (kube-prometheus-stack's default).
    labels:
      grafana_dashboard: "1"
    # e.g. the sidecar's folder annotation.
    annotations: {}
`;
}

const image = {
  type: 'object',
  additionalProperties: false,
  properties: {
    repository: { type: 'string', minLength: 1 },
    tag: { type: 'string' },
    pullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
  },
};

const stringMap = { type: 'object', additionalProperties: { type: 'string' } };
const quantities = { type: 'object', additionalProperties: { type: ['string', 'number'] } };

/** A container's resources (core/v1 ResourceRequirements). */
const resources = {
  type: 'object',
  additionalProperties: false,
  properties: {
    requests: quantities,
    limits: quantities,
    claims: { type: 'array', items: { type: 'object' } },
  },
};

const hostDir = { type: 'string', pattern: '^/[^\\s"\'{}]*$' };

/** A Kubernetes object name (DNS subdomain), or empty. */
const objectNameOrEmpty = { type: 'string', pattern: '^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$' };

// The capture agent's --image-repository grammar (its agent/ref.ts, distribution's reference
// grammar): HOST[:PORT][/PATH], the host with a "." or a ":" (a port, or an IPv6 address in
// brackets), or localhost; path components lowercase. Go's regexp (Helm's schema check) has no
// lookahead, hence the alternatives.
const DOMAIN_COMPONENT = '[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?';
const PATH_COMPONENT = '[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*';
const REGISTRY_HOST = [
  `(${DOMAIN_COMPONENT}(\\.${DOMAIN_COMPONENT})+|\\[[a-fA-F0-9]*:[a-fA-F0-9:]*\\])(:[0-9]+)?`,
  `(${DOMAIN_COMPONENT}|\\[[a-fA-F0-9]+\\]):[0-9]+`,
  'localhost',
].join('|');
/** captureAgent.checkpointImages.repository: what --image-repository takes, or empty (off). */
export const IMAGE_REPOSITORY_PATTERN = `^((${REGISTRY_HOST})(/${PATH_COMPONENT})*)?$`;

const imagePullSecrets = {
  type: 'array',
  items: {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string', minLength: 1 } },
  },
};

/** A Prometheus duration (`for:`, `interval:`), as Prometheus parses it. */
const duration = { type: 'string', pattern: '^(([0-9]+)(ms|s|m|h|d|w|y))+$' };
// `helm --set` passes a decimal like 0.2 as a string: accept the number or its digits.
const ratio = {
  anyOf: [
    { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    { type: 'string', pattern: '^(0?\\.[0-9]*[1-9][0-9]*|1(\\.0*)?)$' },
  ],
};
const seconds = {
  anyOf: [
    { type: 'number', exclusiveMinimum: 0 },
    { type: 'string', pattern: '^([1-9][0-9]*(\\.[0-9]+)?|0?\\.[0-9]*[1-9][0-9]*)$' },
  ],
};
/** A ServiceMonitor's or PodMonitor's values. */
const scrape = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    labels: stringMap,
    interval: duration,
    // Empty: Prometheus's default.
    scrapeTimeout: { anyOf: [duration, { type: 'string', maxLength: 0 }] },
  },
};

/** A component's values: enabled, image, replicas, resources, scheduling, and its own. */
function component(own: Record<string, unknown>) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      enabled: { type: 'boolean' },
      image,
      replicas: { type: 'integer', minimum: 0 },
      resources,
      podAnnotations: stringMap,
      podLabels: stringMap,
      nodeSelector: stringMap,
      tolerations: { type: 'array', items: { type: 'object' } },
      affinity: { type: 'object' },
      ...own,
    },
  };
}

/**
 * Helm checks values against this on install, upgrade, lint and template: a typo is an error. `global`
 * is allowed with any content, as Helm gives it to a subchart (and a parent chart sets it).
 */
export const VALUES_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  properties: {
    // Unconstrained: a parent chart's globals are its own (global.imagePullSecrets is read, as names
    // or {name} objects).
    global: { type: 'object' },
    imagePullSecrets,
    controller: component({
      // The binary's own bounds and levels (its options table).
      concurrency: {
        type: 'integer',
        minimum: CONTROLLER_OPTIONS.concurrency.min,
        maximum: CONTROLLER_OPTIONS.concurrency.max,
      },
      maxConcurrency: {
        type: 'integer',
        minimum: CONTROLLER_OPTIONS['max-concurrency'].min,
        maximum: CONTROLLER_OPTIONS['max-concurrency'].max,
      },
      logLevel: { type: 'string', enum: [...CONTROLLER_OPTIONS['log-level'].values] },
      otlpEndpoint: { type: 'string', pattern: '^(https?://[^\\s"]+)?$' },
      disableClaimEvents: { type: 'boolean' },
      shards: { type: 'integer', minimum: 1, maximum: MAX_SHARDS },
      extraArgs: { type: 'array', items: { type: 'string', pattern: '^--[a-z]' } },
    }),
    captureAgent: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean' },
        // Absolute paths without spaces or quotes (they are rendered into flags).
        kubeletCheckpointDir: hostDir,
        dataDir: hostDir,
        kubeletInsecureTLS: { type: 'boolean' },
        checkpointImages: {
          type: 'object',
          additionalProperties: false,
          properties: {
            repository: { type: 'string', maxLength: IMAGE_NAME_MAX, pattern: IMAGE_REPOSITORY_PATTERN },
            caConfigMap: objectNameOrEmpty,
            authSecret: objectNameOrEmpty,
            insecureTLS: { type: 'boolean' },
            plainHTTP: { type: 'boolean' },
          },
        },
        resources,
        podAnnotations: stringMap,
        podLabels: stringMap,
        nodeSelector: stringMap,
        tolerations: { type: 'array', items: { type: 'object' } },
        affinity: { type: 'object' },
      },
    },
    webhook: component({
      tlsSecretName: { type: 'string', minLength: 1 },
      certManager: {
        type: 'object',
        additionalProperties: false,
        properties: { enabled: { type: 'boolean' } },
      },
      caBundle: { type: 'string' },
    }),
    policies: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean' },
        controllerServiceAccount: {
          type: 'object',
          additionalProperties: false,
          properties: {
            // Empty: the release namespace.
            namespace: { type: 'string', pattern: '^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$' },
            name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$' },
          },
        },
        controllerUsers: { type: 'array', items: { type: 'string', minLength: 1 } },
        controllerGroups: { type: 'array', items: { type: 'string', minLength: 1 } },
      },
    },
    monitoring: {
      type: 'object',
      additionalProperties: false,
      properties: {
        serviceMonitor: scrape,
        podMonitor: scrape,
        webhookTLSConfig: { type: 'object' },
        prometheusRule: {
          type: 'object',
          additionalProperties: false,
          properties: {
            enabled: { type: 'boolean' },
            labels: stringMap,
            pendingSeconds: seconds,
            exhaustedFor: duration,
            bindP99Seconds: seconds,
            noLeaderFor: duration,
            doctorFor: duration,
            reconcileErrorRatio: ratio,
            webhookErrorRatio: ratio,
          },
        },
        dashboard: {
          type: 'object',
          additionalProperties: false,
          properties: {
            enabled: { type: 'boolean' },
            namespace: { type: 'string', pattern: '^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$' },
            labels: stringMap,
            annotations: stringMap,
          },
        },
      },
    },
  },
};
