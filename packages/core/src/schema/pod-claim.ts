// PodClaim: one claim binds one pool pod (DESIGN.md "PodClaim").
import { AGE, conditions, count, objectSchema, observedGeneration, str, time } from './common.ts';
import type { KindSchema } from './types.ts';

export const RULE_IMMUTABLE = 'self == oldSelf';
export const RULE_SOURCE_NOT_POD =
  "!has(self.sourcePod) || !has(self.podName) || self.sourcePod == '' || self.sourcePod != self.podName";

export const podClaimSchema: KindSchema = {
  kind: 'PodClaim',
  listKind: 'PodClaimList',
  plural: 'podclaims',
  singular: 'podclaim',
  shortNames: ['pc'],
  categories: ['claimkit'],
  description: 'A claim that binds one pod of a pool.',
  schema: objectSchema(
    'PodClaim binds one pool pod; the controller writes podName, nodeName and sourcePod.',
    {
      type: 'object',
      description: 'The pool, and the pod the controller bound.',
      required: ['poolName'],
      properties: {
        poolName: str('The PodPool to claim from; immutable.', {
          minLength: 1,
          maxLength: 253,
          'x-kubernetes-validations': [{ rule: RULE_IMMUTABLE, message: 'poolName is immutable' }],
        }),
        podName: str('The bound pod (written by the controller).', { maxLength: 253 }),
        nodeName: str('The node of the bound pod (written by the controller).', { maxLength: 253 }),
        sourcePod: str('During a migration: the pod being left (written by the controller).', {
          maxLength: 253,
        }),
      },
      'x-kubernetes-validations': [
        { rule: RULE_SOURCE_NOT_POD, message: 'sourcePod must differ from podName', fieldPath: '.sourcePod' },
      ],
    },
    {
      type: 'object',
      description: 'Binding state.',
      properties: {
        phase: str('Pending, Bound, Migrating or Lost.', { enum: ['Pending', 'Bound', 'Migrating', 'Lost'] }),
        boundTime: time('When the claim was last bound.'),
        lostTime: time('When the bound pod was found gone.'),
        migrations: count('Completed migrations.'),
        observedGeneration,
        conditions,
      },
    },
  ),
  printerColumns: [
    { name: 'Pool', type: 'string', jsonPath: '.spec.poolName' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Pod', type: 'string', jsonPath: '.spec.podName' },
    { name: 'Node', type: 'string', jsonPath: '.spec.nodeName' },
    { name: 'Source Pod', type: 'string', jsonPath: '.spec.sourcePod', priority: 1 },
    { name: 'Migrations', type: 'integer', jsonPath: '.status.migrations', priority: 1 },
    AGE,
  ],
};
