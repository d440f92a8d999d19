// The Helm chart's own files: Chart.yaml, the values a user sets (values.yaml) and the schema Helm
// checks them against (values.schema.json).
import { CONTROLLER_IMAGE } from '@claimkit/controller';
import { DEFAULT_CONTROLLER_SERVICE_ACCOUNT } from '@claimkit/core';
import { WEBHOOK_IMAGE, WEBHOOK_TLS_SECRET } from '@claimkit/webhook';

const CHART_VERSION = '0.1.0';

export const CHART_YAML = `apiVersion: v2
name: claimkit
description: Safe claims on Kubernetes - capture-once claims with fencing tokens, and warm pod pools with claims that own their pods (controller, admission webhook, admission policies, CRDs).
type: application
version: ${CHART_VERSION}
appVersion: "${CHART_VERSION}"
keywords: [claims, pools, leases, fencing, operator]
`;

export const VALUES_YAML = `# Which components to install. The CRDs (crds/) are always installed by Helm.
controller:
  enabled: true
  image:
    repository: ${CONTROLLER_IMAGE.split(':')[0]}
    # Default: the chart's appVersion.
    tag: ""
    pullPolicy: IfNotPresent
  # With --leader-elect only the leader runs workers; safety never depends on it.
  replicas: 2
  concurrency: 4
  logLevel: info

webhook:
  enabled: true
  image:
    repository: ${WEBHOOK_IMAGE.split(':')[0]}
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

# ValidatingAdmissionPolicies (Kubernetes 1.30 or newer), enforced by the API server itself: only the
# controller's identity writes a PodClaim's podName, nodeName and sourcePod; pool pods are never
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
`;

const image = {
  type: 'object',
  additionalProperties: false,
  properties: {
    repository: { type: 'string', minLength: 1 },
    tag: { type: 'string' },
    pullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
  },
};

/** A component's values: enabled, image, replicas, and its own. */
function component(own: Record<string, unknown>) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      enabled: { type: 'boolean' },
      image,
      replicas: { type: 'integer', minimum: 0 },
      ...own,
    },
  };
}

/** Helm checks values against this on install, upgrade, lint and template: a typo is an error. */
export const VALUES_SCHEMA = {
  $schema: 'https://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  properties: {
    controller: component({
      concurrency: { type: 'integer', minimum: 1 },
      logLevel: { type: 'string', enum: ['debug', 'info', 'warn', 'error'] },
    }),
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
  },
};
