// Schema pieces shared by the four kinds: metadata, conditions, label selectors, pod references.
import type { JSONSchemaProps, ValidationRule } from '../api/crd-schema.ts';

export const int = (description: string, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'integer',
  format: 'int64',
  description,
  ...extra,
});

export const str = (description: string, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'string',
  description,
  ...extra,
});

export const time = (description: string): JSONSchemaProps => ({
  type: 'string',
  format: 'date-time',
  description,
});

export const stringMap = (description: string): JSONSchemaProps => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string' },
});

export const podRef = (description: string): JSONSchemaProps => ({
  type: 'object',
  description,
  required: ['name', 'uid'],
  properties: {
    name: str('Pod name.', { minLength: 1 }),
    uid: str('Pod UID: a pod recreated under the same name is another pod.', { minLength: 1 }),
  },
});

export const labelSelector = (description: string): JSONSchemaProps => ({
  type: 'object',
  description,
  'x-kubernetes-map-type': 'atomic',
  properties: {
    matchLabels: stringMap('Labels that must all match.'),
    matchExpressions: {
      type: 'array',
      description: 'Set-based requirements; all must match.',
      items: {
        type: 'object',
        required: ['key', 'operator'],
        properties: {
          key: str('Label key.'),
          operator: str('How the key relates to the values.', {
            enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'],
          }),
          values: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
        },
      },
      'x-kubernetes-list-type': 'atomic',
    },
  },
});

/** metav1.Condition, as every Kubernetes API declares it. */
export const conditions: JSONSchemaProps = {
  type: 'array',
  description: 'Latest observations of the object state.',
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
  items: {
    type: 'object',
    required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
    properties: {
      type: str('Condition type in CamelCase.', {
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      }),
      status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
      observedGeneration: int('The generation the condition was set for.', { minimum: 0 }),
      lastTransitionTime: time('When the condition last changed status.'),
      reason: str('Machine-readable reason in CamelCase.', {
        minLength: 1,
        maxLength: 1024,
        pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      }),
      message: str('Human-readable details.', { maxLength: 32768 }),
    },
  },
};

export const observedGeneration = int('The metadata.generation the status was computed from.', {
  minimum: 0,
});

export const count = (description: string): JSONSchemaProps => int(description, { minimum: 0 });

/**
 * apiVersion, kind and metadata, as every CRD schema starts; `rules` are root-level CEL rules (self is
 * the whole object: they see spec and status together, and every update has an oldSelf there).
 */
export function objectSchema(
  description: string,
  spec: JSONSchemaProps,
  status: JSONSchemaProps,
  rules: ValidationRule[] = [],
): JSONSchemaProps {
  return {
    type: 'object',
    description,
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec,
      status,
    },
    ...(rules.length > 0 ? { 'x-kubernetes-validations': rules } : {}),
  };
}

/** The summary condition every kind's controller keeps (True when the object does what its spec asks). */
const READY_CONDITION = 'Ready';

const readyPath = (field: 'status' | 'reason' | 'message') =>
  `.status.conditions[?(@.type=='${READY_CONDITION}')].${field}`;

/**
 * Ready and Reason, as `kubectl get` shows them for cert-manager's or Cluster API's kinds: the Ready
 * condition's status and reason in the default view (they go after a kind's own columns, before Age).
 */
export const READY_COLUMNS = [
  { name: 'Ready', type: 'string', jsonPath: readyPath('status') },
  { name: 'Reason', type: 'string', jsonPath: readyPath('reason') },
] as const;

/** The Ready condition's message, in `-o wide` only (it can be long). */
export const READY_MESSAGE = {
  name: 'Message',
  type: 'string',
  jsonPath: readyPath('message'),
  priority: 1,
} as const;

export const AGE = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
} as const;
