// PodClaim: one claim binds one pool pod (DESIGN.md "PodClaim").
import { HINT_ANNOTATIONS } from '../api/constants.ts';
import type { JSONSchemaProps, KindSchema } from '../api/crd-schema.ts';
import {
  AGE,
  conditions,
  count,
  objectSchema,
  observedGeneration,
  READY_COLUMNS,
  READY_MESSAGE,
  str,
  time,
} from './common.ts';

export const RULE_IMMUTABLE = 'self == oldSelf';
const RULE_SOURCE_NOT_POD =
  "!has(self.sourcePod) || !has(self.podName) || self.sourcePod == '' || self.sourcePod != self.podName";
/**
 * CEL: spec's legacy binding fields (claims an earlier release stored) are kept or removed, never set:
 * the binding is written to status, so a writer still on the old API is refused instead of binding.
 */
const legacyFieldRule = (f: string) =>
  `!has(self.${f}) || self.${f} == '' || (has(oldSelf.${f}) && oldSelf.${f} == self.${f})`;
/** CEL: the binding's pod UID belongs to a bound pod. */
const RULE_UID_WITH_POD =
  "!has(self.podUID) || self.podUID == '' || (has(self.podName) && self.podName != '')";

/** CEL: no key of the map `self` is claimkit's (the pool pod labels, the undo record...). */
const RULE_NO_CLAIMKIT_KEYS = "self.all(k, !k.startsWith('claimkit.dev/'))";
/** CEL: no key of the map `self` is a disruption hint the controller owns. */
const RULE_NO_HINT_KEYS = `self.all(k, !(k in [${HINT_ANNOTATIONS.map((h) => `'${h}'`).join(', ')}]))`;

/** Bounded maps keep the CEL rules' cost estimate within the API server's budget. */
const MAX_POD_METADATA_KEYS = 64;

/**
 * spec.podMetadata: put on the pod in the bind's own write, removed (restored) on release. Shared
 * with the PodClaimSet template.
 */
export const podMetadataSchema: JSONSchemaProps = {
  type: 'object',
  description:
    'Labels and annotations put on the bound pod in the bind write and removed when the pod is released; applied at each bind (a change takes effect at the next bind or migration). No claimkit.dev/ keys, no disruption-hint annotations.',
  properties: {
    labels: {
      type: 'object',
      description: 'Labels for the bound pod.',
      maxProperties: MAX_POD_METADATA_KEYS,
      additionalProperties: { type: 'string', maxLength: 63 },
      'x-kubernetes-validations': [
        { rule: RULE_NO_CLAIMKIT_KEYS, message: 'podMetadata may not set claimkit.dev/ labels' },
      ],
    },
    annotations: {
      type: 'object',
      description: 'Annotations for the bound pod.',
      maxProperties: MAX_POD_METADATA_KEYS,
      additionalProperties: { type: 'string', maxLength: 4096 },
      'x-kubernetes-validations': [
        { rule: RULE_NO_CLAIMKIT_KEYS, message: 'podMetadata may not set claimkit.dev/ annotations' },
        {
          rule: RULE_NO_HINT_KEYS,
          message: `podMetadata may not set the disruption hints the controller owns (${HINT_ANNOTATIONS.join(', ')})`,
        },
      ],
    },
  },
};

export const lostPolicySchema: JSONSchemaProps = str(
  'What a claim does when its pod is lost: Rebind binds a fresh pod; Fail keeps the claim Lost (set Rebind to recover).',
  { enum: ['Rebind', 'Fail'], default: 'Rebind' },
);

export const podClaimSchema: KindSchema = {
  kind: 'PodClaim',
  listKind: 'PodClaimList',
  plural: 'podclaims',
  singular: 'podclaim',
  shortNames: ['pc'],
  categories: ['claimkit'],
  description: 'A claim that binds one pod of a pool.',
  schema: objectSchema(
    'PodClaim binds one pool pod; the controller records the binding (podName, nodeName, podUID, sourcePod) in status.',
    {
      type: 'object',
      description: 'The pool to claim from, and what to put on the pod.',
      required: ['poolName'],
      properties: {
        poolName: str('The PodPool to claim from; immutable.', {
          minLength: 1,
          maxLength: 253,
          'x-kubernetes-validations': [{ rule: RULE_IMMUTABLE, message: 'poolName is immutable' }],
        }),
        podName: str(
          'Deprecated: the binding of a claim stored by an earlier release, which the controller moves to status.podName. Never set; removed by the controller.',
          { maxLength: 253 },
        ),
        nodeName: str('Deprecated: moved to status.nodeName by the controller, as podName.', {
          maxLength: 253,
        }),
        sourcePod: str('Deprecated: moved to status.sourcePod by the controller, as podName.', {
          maxLength: 253,
        }),
        podMetadata: podMetadataSchema,
        lostPolicy: lostPolicySchema,
      },
      'x-kubernetes-validations': [
        { rule: RULE_SOURCE_NOT_POD, message: 'sourcePod must differ from podName', fieldPath: '.sourcePod' },
        ...(['podName', 'nodeName', 'sourcePod'] as const).map((f) => ({
          rule: legacyFieldRule(f),
          message: `spec.${f} is no longer written: the binding is in status (it may only be removed)`,
          fieldPath: `.${f}`,
        })),
      ],
    },
    {
      type: 'object',
      description: 'The binding, written by the controller only, with the phase in one write.',
      properties: {
        phase: str('Pending, Bound, Migrating or Lost.', { enum: ['Pending', 'Bound', 'Migrating', 'Lost'] }),
        podName: str('The bound pod.', { maxLength: 253 }),
        nodeName: str('The node of the bound pod.', { maxLength: 253 }),
        podUID: str('The UID of the bound pod: a pod created again under its name is not it.', {
          maxLength: 36,
        }),
        sourcePod: str('During a migration: the pod being left.', { maxLength: 253 }),
        boundTime: time('When the claim was last bound.'),
        address: {
          type: 'object',
          description:
            'Where the bound pod is: its IPs, its node IP and the container ports of the pool template (written with the binding, removed without one).',
          required: ['podIPs'],
          properties: {
            podIPs: {
              type: 'array',
              description: 'The pod IPs (IPv4 and/or IPv6).',
              maxItems: 2,
              items: str('A pod IP.', { maxLength: 45 }),
            },
            hostIP: str('The IP of the node the pod runs on.', { maxLength: 45 }),
            ports: {
              type: 'array',
              description: "The containers' ports, as the pool template declares them.",
              maxItems: 64,
              items: {
                type: 'object',
                required: ['containerPort'],
                properties: {
                  name: str('The port name.', { maxLength: 15 }),
                  containerPort: {
                    type: 'integer',
                    minimum: 1,
                    maximum: 65535,
                    description: 'The port number.',
                  },
                  protocol: str('TCP, UDP or SCTP.', { maxLength: 4 }),
                },
              },
            },
          },
        },
        lostTime: time('When the bound pod was found gone.'),
        migrations: count('Completed migrations.'),
        observedGeneration,
        conditions,
      },
      'x-kubernetes-validations': [
        { rule: RULE_SOURCE_NOT_POD, message: 'sourcePod must differ from podName', fieldPath: '.sourcePod' },
        { rule: RULE_UID_WITH_POD, message: 'podUID needs podName', fieldPath: '.podUID' },
      ],
    },
  ),
  printerColumns: [
    { name: 'Pool', type: 'string', jsonPath: '.spec.poolName' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Pod', type: 'string', jsonPath: '.status.podName' },
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
    ...READY_COLUMNS,
    { name: 'Address', type: 'string', jsonPath: '.status.address.podIPs[0]', priority: 1 },
    { name: 'Source Pod', type: 'string', jsonPath: '.status.sourcePod', priority: 1 },
    { name: 'Migrations', type: 'integer', jsonPath: '.status.migrations', priority: 1 },
    { name: 'Lost Policy', type: 'string', jsonPath: '.spec.lostPolicy', priority: 1 },
    {
      name: 'Waiting',
      type: 'string',
      jsonPath: ".status.conditions[?(@.type=='Bound')].reason",
      priority: 1,
    },
    READY_MESSAGE,
    AGE,
  ],
};
