// Capture: one pod at a time performs a one-time capture for a key (DESIGN.md "Capture").
import {
  AGE,
  conditions,
  count,
  int,
  labelSelector,
  objectSchema,
  observedGeneration,
  podRef,
  str,
  time,
} from './common.ts';
import type { KindSchema } from './types.ts';

// `has(self.type)` guards the API server's validation of the default itself.
export const RULE_HTTP_NEEDS_URL =
  "!has(self.type) || self.type != 'Http' || (has(self.url) && self.url != '')";

export const captureSchema: KindSchema = {
  kind: 'Capture',
  listKind: 'CaptureList',
  plural: 'captures',
  singular: 'capture',
  shortNames: ['cap'],
  categories: ['claimkit'],
  description: 'One pod at a time performs a one-time capture for a key; the result is durable.',
  schema: objectSchema(
    'Capture arbitrates which pod performs a one-time capture, fenced by a claim token.',
    {
      type: 'object',
      description: 'What to capture and how long a claim lasts.',
      required: ['selector'],
      properties: {
        selector: labelSelector('Candidate pods.'),
        container: str('Container to capture; default: the first container.'),
        leaseSeconds: int('A claim is live while renewTime + leaseSeconds > now.', {
          default: 3000,
          minimum: 1,
        }),
        timeoutSeconds: int('How long one capture attempt may take.', { default: 1800, minimum: 1 }),
        maxAttempts: int('Failed attempts before phase Failed.', { default: 3, minimum: 1 }),
        backend: {
          type: 'object',
          description: 'Who performs the capture.',
          default: { type: 'External' },
          properties: {
            type: str(
              'External: the holder completes with a fenced write. Http: an agent API. Kubelet: ContainerCheckpoint.',
              { enum: ['External', 'Http', 'Kubelet'], default: 'External' },
            ),
            url: str('Http backend URL; {nodeName} is replaced by the pod node.', { maxLength: 2048 }),
          },
          'x-kubernetes-validations': [
            { rule: RULE_HTTP_NEEDS_URL, message: 'url is required when type is Http', fieldPath: '.url' },
          ],
        },
      },
    },
    {
      type: 'object',
      description: 'Observed state; written by the controller and by fenced holder writes.',
      properties: {
        phase: str('Pending, Capturing, Captured or Failed.', {
          enum: ['Pending', 'Capturing', 'Captured', 'Failed'],
        }),
        epoch: int('Highest token ever issued; never decreases.', { minimum: 0 }),
        claim: {
          type: 'object',
          description: 'Present only while someone holds the claim.',
          required: ['holder', 'token', 'acquireTime', 'renewTime', 'leaseSeconds'],
          properties: {
            holder: podRef('The holder pod, by name and UID.'),
            token: int('The fencing token: epoch at acquisition.', { minimum: 1 }),
            acquireTime: time('When the holder acquired the claim.'),
            renewTime: time('When the holder last renewed the claim.'),
            leaseSeconds: int('Lease length at acquisition.', { minimum: 1 }),
            job: {
              type: 'object',
              description: 'Backend job, once started (a restarted controller resumes it).',
              required: ['id'],
              properties: {
                id: str('Backend job id.', { minLength: 1 }),
                startTime: time('When the job started.'),
              },
            },
          },
        },
        result: {
          type: 'object',
          description: 'The durable capture result.',
          required: ['ref', 'token', 'capturedFrom', 'completionTime'],
          properties: {
            ref: str('Where the capture is stored.', { minLength: 1 }),
            token: int('Token of the claim that produced the result.', { minimum: 1 }),
            capturedFrom: podRef('The pod the capture was taken from.'),
            completionTime: time('When the capture completed.'),
          },
        },
        attempts: count('Failed attempts so far.'),
        takeovers: count('Claims taken over from dead or expired holders.'),
        lastError: str('The last error a capture attempt reported.'),
        observedGeneration,
        conditions,
      },
    },
  ),
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Holder', type: 'string', jsonPath: '.status.claim.holder.name' },
    { name: 'Token', type: 'integer', jsonPath: '.status.claim.token' },
    { name: 'Epoch', type: 'integer', jsonPath: '.status.epoch', priority: 1 },
    { name: 'Attempts', type: 'integer', jsonPath: '.status.attempts', priority: 1 },
    { name: 'Source Pod', type: 'string', jsonPath: '.status.result.capturedFrom.name', priority: 1 },
    { name: 'Result', type: 'string', jsonPath: '.status.result.ref', priority: 1 },
    AGE,
  ],
};
