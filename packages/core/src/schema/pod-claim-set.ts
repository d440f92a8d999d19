// PodClaimSet: N claims from a template, with the scale subresource (DESIGN.md "PodClaimSet").

import type { KindSchema } from '../api/crd-schema.ts';
import { KIND_INFO } from '../api/types.ts';
import {
  AGE,
  conditions,
  count,
  int,
  labelSelector,
  objectSchema,
  observedGeneration,
  READY_COLUMNS,
  READY_MESSAGE,
  str,
  stringMap,
} from './common.ts';
import { lostPolicySchema, podMetadataSchema, RULE_IMMUTABLE } from './pod-claim.ts';

export const podClaimSetSchema: KindSchema = {
  kind: 'PodClaimSet',
  listKind: 'PodClaimSetList',
  plural: 'podclaimsets',
  singular: 'podclaimset',
  shortNames: ['pcs'],
  categories: ['claimkit'],
  description: 'N PodClaims from a template; scalable.',
  schema: objectSchema(
    'PodClaimSet keeps `replicas` PodClaims, owned through ownerReferences.',
    {
      type: 'object',
      description: 'How many claims, and their template.',
      required: ['selector', 'template'],
      properties: {
        // Default 1, as a Deployment's: a set written without replicas asks for one claim.
        replicas: int('Desired number of claims.', { format: 'int32', default: 1, minimum: 0 }),
        selector: labelSelector('Selects the claims of the set.'),
        template: {
          type: 'object',
          description: 'Template of each claim.',
          required: ['spec'],
          properties: {
            metadata: {
              type: 'object',
              description: 'Labels of each claim.',
              properties: { labels: stringMap('Claim labels.') },
            },
            spec: {
              type: 'object',
              description: 'Spec of each claim.',
              required: ['poolName'],
              properties: {
                poolName: str('The PodPool every claim binds from; immutable.', {
                  minLength: 1,
                  maxLength: 253,
                  'x-kubernetes-validations': [{ rule: RULE_IMMUTABLE, message: 'poolName is immutable' }],
                }),
                podMetadata: podMetadataSchema,
                lostPolicy: lostPolicySchema,
              },
            },
          },
        },
      },
    },
    {
      type: 'object',
      description: 'Claim counts by phase.',
      properties: {
        replicas: count('Claims that exist and are not deleting.'),
        boundReplicas: count('Bound claims.'),
        pending: count('Pending claims.'),
        migrating: count('Migrating claims.'),
        lost: count('Lost claims.'),
        labelSelector: str('The selector in string form, for the scale subresource.'),
        observedGeneration,
        conditions,
      },
    },
  ),
  printerColumns: [
    { name: 'Pool', type: 'string', jsonPath: '.spec.template.spec.poolName' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Current', type: 'integer', jsonPath: '.status.replicas' },
    { name: 'Bound', type: 'integer', jsonPath: '.status.boundReplicas' },
    ...READY_COLUMNS,
    { name: 'Pending', type: 'integer', jsonPath: '.status.pending', priority: 1 },
    { name: 'Migrating', type: 'integer', jsonPath: '.status.migrating', priority: 1 },
    { name: 'Lost', type: 'integer', jsonPath: '.status.lost', priority: 1 },
    READY_MESSAGE,
    AGE,
  ],
  scale: KIND_INFO.PodClaimSet.scale,
};
