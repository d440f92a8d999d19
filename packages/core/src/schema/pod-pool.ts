// PodPool: a warm pool of identical pods (DESIGN.md "PodPool").

import type { JSONSchemaProps, KindSchema } from '../api/crd-schema.ts';
import { KIND_INFO } from '../api/types.ts';
import {
  AGE,
  conditions,
  count,
  int,
  objectSchema,
  observedGeneration,
  READY_COLUMNS,
  READY_MESSAGE,
  str,
  stringMap,
} from './common.ts';

const RULE_MIN_IDLE_LE_MAX_PODS = 'self.minIdle <= self.maxPods';

/** A lowercase RFC 1123 subdomain (an object name), as the API server's pattern. */
const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const DNS_SUBDOMAIN = new RegExp(DNS_SUBDOMAIN_PATTERN);

/** True for a valid object name: a lowercase RFC 1123 subdomain of at most 253 characters. */
export function isDnsSubdomain(s: string): boolean {
  return s.length >= 1 && s.length <= 253 && DNS_SUBDOMAIN.test(s);
}

/**
 * spec.source. Whether `container` names a container of the template is checked by the webhook and
 * the controller (SourceReady=False, ContainerNotFound), not by a CEL rule: a rule over the
 * unbounded containers list would exceed the API server's CEL cost budget.
 */
const podPoolSourceSchema: JSONSchemaProps = {
  type: 'object',
  description:
    "Start the pool's pods from a Capture's result: only from a fenced one (no claim open, result token == epoch). Until the Capture has one, the pool creates no pods (condition SourceReady). Pods carry annotations claimkit.dev/source-capture, -ref and -token and env CLAIMKIT_SOURCE_REF and CLAIMKIT_SOURCE_TOKEN in every container; an 'image:' ref becomes the source container's image, a checkpoint OCI image the node's runtime restores (containerd 2.1-2.3 with enable_experimental_restore_via_create, CRI-O; condition SourceRestored). A new fenced result replaces Idle pods as a template change does.",
  required: ['captureName'],
  properties: {
    captureName: str("The Capture in the pool's namespace whose fenced result seeds the pods.", {
      minLength: 1,
      maxLength: 253,
      pattern: DNS_SUBDOMAIN_PATTERN,
    }),
    container: str(
      "The container whose image an 'image:' result ref replaces (default: the first); must name a container of the template.",
      { minLength: 1, maxLength: 63 },
    ),
    onRestoreFailure: {
      type: 'string',
      enum: ['Wait', 'Cold'],
      default: 'Wait',
      description:
        "What the pool does with a pod that cannot be restored from an 'image:' ref (pull, create or CRIU failing; condition SourceRestored, Event RestoreFailed): Wait keeps it (never handed out; the kubelet retries), Cold deletes it and starts that result's pods cold from the template's image (with the source annotations and env; status.coldStartRef) until the source has another result.",
    },
  },
};

/** A PodTemplateSpec: what claimkit reads is typed, the rest of the pod spec is kept as given. */
const podTemplateSpec: JSONSchemaProps = {
  type: 'object',
  description: 'The pods of the pool (a PodTemplateSpec).',
  required: ['spec'],
  properties: {
    metadata: {
      type: 'object',
      description: 'Labels and annotations of every pool pod.',
      properties: { labels: stringMap('Pod labels.'), annotations: stringMap('Pod annotations.') },
    },
    spec: {
      type: 'object',
      description: 'A PodSpec; fields other than containers are passed to the pods unchanged.',
      'x-kubernetes-preserve-unknown-fields': true,
      required: ['containers'],
      properties: {
        containers: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            required: ['name', 'image'],
            properties: { name: str('Container name.', { minLength: 1 }), image: str('Image.') },
          },
        },
        nodeName: str('Node to run on (normally left to the scheduler).'),
      },
    },
  },
};

export const podPoolSchema: KindSchema = {
  kind: 'PodPool',
  listKind: 'PodPoolList',
  plural: 'podpools',
  singular: 'podpool',
  shortNames: ['pool'],
  categories: ['claimkit'],
  description: 'A warm pool of identical pods that claims bind.',
  schema: objectSchema(
    'PodPool keeps warm pods ready for PodClaims.',
    {
      type: 'object',
      description: 'Pod template and pool size.',
      required: ['template'],
      properties: {
        template: podTemplateSpec,
        minIdle: int(
          'Idle pods to keep ready; the replicas of the scale subresource (HPA, KEDA; 0 scales the warm buffer to zero).',
          { format: 'int32', default: 2, minimum: 0 },
        ),
        maxPods: int('Upper bound on pool pods, bound ones included.', { default: 50, minimum: 1 }),
        releasePolicy: str('What happens to a pod a claim releases.', {
          enum: ['Recycle', 'Delete'],
          default: 'Recycle',
        }),
        drainSeconds: int(
          'How long the source pod of a migration stays Draining before it is released (recycled or deleted); pods a deleted claim releases do not drain, so its finalizer completes at once.',
          {
            default: 0,
            minimum: 0,
          },
        ),
        source: podPoolSourceSchema,
        disruptionBudget: {
          type: 'object',
          description:
            "When set, the controller keeps an owned PodDisruptionBudget '<pool>-bound' selecting the pool's Bound pods, so voluntary evictions (node drains, autoscalers) wait for the claim's release; remove the field to delete it.",
          properties: {
            maxUnavailable: int('Bound pods that may be evicted at once (default 0: none).', {
              default: 0,
              minimum: 0,
            }),
          },
        },
      },
      'x-kubernetes-validations': [
        {
          rule: RULE_MIN_IDLE_LE_MAX_PODS,
          message: 'minIdle must not exceed maxPods',
          fieldPath: '.minIdle',
        },
      ],
    },
    {
      type: 'object',
      description: 'Pod counts by state.',
      properties: {
        total: count('Pool pods.'),
        idle: count('Idle pods.'),
        bound: count('Bound pods.'),
        draining: count('Draining pods.'),
        updated: count('Pods of the current template.'),
        outdated: count(
          'Pods of an outdated template (or with no template hash): Idle ones are replaced, claimed ones deleted on release.',
        ),
        templateHash: str(
          'Hash of the current template; pool pods carry it as label claimkit.dev/template-hash.',
        ),
        selector: str('The label selector of the pool pods in string form, for the scale subresource.'),
        coldStartRef: str(
          "The 'image:' result whose pods start cold: a pod of it could not be restored and spec.source.onRestoreFailure is Cold. Kept until the source has another result or the policy is Wait.",
        ),
        observedGeneration,
        conditions,
      },
    },
  ),
  printerColumns: [
    { name: 'Min Idle', type: 'integer', jsonPath: '.spec.minIdle' },
    { name: 'Max', type: 'integer', jsonPath: '.spec.maxPods' },
    { name: 'Total', type: 'integer', jsonPath: '.status.total' },
    { name: 'Idle', type: 'integer', jsonPath: '.status.idle' },
    { name: 'Bound', type: 'integer', jsonPath: '.status.bound' },
    ...READY_COLUMNS,
    { name: 'Draining', type: 'integer', jsonPath: '.status.draining', priority: 1 },
    { name: 'Updated', type: 'integer', jsonPath: '.status.updated', priority: 1 },
    { name: 'Outdated', type: 'integer', jsonPath: '.status.outdated', priority: 1 },
    { name: 'Policy', type: 'string', jsonPath: '.spec.releasePolicy', priority: 1 },
    { name: 'Source', type: 'string', jsonPath: '.spec.source.captureName', priority: 1 },
    READY_MESSAGE,
    AGE,
  ],
  scale: KIND_INFO.PodPool.scale,
};
