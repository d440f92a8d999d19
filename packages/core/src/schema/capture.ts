// Capture: one pod at a time performs a one-time capture for a key (DESIGN.md "Capture").

import type { KindSchema, ValidationRule } from '../api/crd-schema.ts';
import {
  AGE,
  conditions,
  count,
  int,
  labelSelector,
  objectSchema,
  observedGeneration,
  podRef,
  READY_COLUMNS,
  READY_MESSAGE,
  str,
  time,
} from './common.ts';

// `has(self.type)` guards the API server's validation of the default itself.
const RULE_HTTP_NEEDS_URL = "!has(self.type) || self.type != 'Http' || (has(self.url) && self.url != '')";

// Invariant C1 in the API server itself, for every writer (kubectl included): the transition rules
// below sit at the root of the schema, not on `status`, because a transition rule runs only where
// an old value exists: at the root that is every update, so they also judge the first status write
// (status absent before) and a write that drops status or one of its fields, which rules on
// `status` or `status.epoch` would never see. Each rule holds when status is unchanged, so spec and
// metadata updates (which keep the stored status) always pass. Status writes that core makes:
// acquire, takeover and the sweep (a new holder: token = epoch + 1), re-entry, renew and recordJob
// (the same claim), complete (drops the claim, result.token = its token), fail and release (drop the
// claim), retry (drops the result, keeps epoch), doctor's repairs (the same transitions).
const OLD_EPOCH = '(has(oldSelf.status) && has(oldSelf.status.epoch) ? oldSelf.status.epoch : 0)';
const OLD_CLAIM = 'has(oldSelf.status) && has(oldSelf.status.claim)';

/** status.epoch never decreases and, once set, is never removed. */
export const RULE_EPOCH_NEVER_DECREASES: ValidationRule = {
  rule:
    '!has(oldSelf.status) || !has(oldSelf.status.epoch) || ' +
    '(has(self.status) && has(self.status.epoch) && self.status.epoch >= oldSelf.status.epoch)',
  message: 'epoch never decreases, nor is it removed',
  fieldPath: '.status.epoch',
};

/**
 * The epoch moves only together with the claim it issues (token == the new epoch): a bare epoch
 * edit would leave an open claim's token below the epoch, or make a standing result look unfenced.
 */
const RULE_EPOCH_MOVES_WITH_NEW_CLAIM: ValidationRule = {
  rule:
    `!has(self.status) || !has(self.status.epoch) || self.status.epoch == ${OLD_EPOCH} || ` +
    '(has(self.status.claim) && self.status.claim.token == self.status.epoch)',
  message: 'the epoch changes only with a new claim whose token is the new epoch',
  fieldPath: '.status.epoch',
};

/**
 * A new holder (a claim appears, or its holder or token changes) needs token == the new epoch, above
 * the previous epoch: every acquisition issues a fresh, higher token.
 */
export const RULE_NEW_HOLDER_NEW_TOKEN: ValidationRule = {
  rule:
    '!has(self.status) || !has(self.status.claim) || ' +
    `(${OLD_CLAIM} && self.status.claim.token == oldSelf.status.claim.token && ` +
    'self.status.claim.holder.name == oldSelf.status.claim.holder.name && ' +
    'self.status.claim.holder.uid == oldSelf.status.claim.holder.uid) || ' +
    `(has(self.status.epoch) && self.status.claim.token == self.status.epoch && self.status.claim.token > ${OLD_EPOCH})`,
  message: 'a new holder needs a new token: claim.token must equal epoch and be above the previous epoch',
  fieldPath: '.status.claim.token',
};

/**
 * A new or changed result carries the token of the claim that produced it and closes that claim in
 * the same write (as core's fenced complete does); a result next to an open claim is what detection
 * calls unfenced (capture/result-fence.ts). An unchanged result stays, whatever happens to the claim.
 */
export const RULE_RESULT_NEEDS_CLAIM_TOKEN: ValidationRule = {
  rule:
    '!has(self.status) || !has(self.status.result) || ' +
    '(has(oldSelf.status) && has(oldSelf.status.result) && self.status.result == oldSelf.status.result) || ' +
    `(${OLD_CLAIM} && self.status.result.token == oldSelf.status.claim.token && !has(self.status.claim))`,
  message:
    'no result without the current claim token: result.token must be the token of the claim this write closes',
  fieldPath: '.status.result.token',
};

/** Every token in status was issued: none above epoch (also on the first status write). */
const RULE_CLAIM_TOKEN_ISSUED: ValidationRule = {
  rule: '!has(self.claim) || (has(self.epoch) && self.claim.token <= self.epoch)',
  message: 'every token must have been issued: the claim token is above the epoch',
  fieldPath: '.claim.token',
};
const RULE_RESULT_TOKEN_ISSUED: ValidationRule = {
  rule: '!has(self.result) || (has(self.epoch) && self.result.token <= self.epoch)',
  message: 'every token must have been issued: the result token is above the epoch',
  fieldPath: '.result.token',
};

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
            url: str(
              "Http backend URL; {nodeName} and {nodeIP} are replaced by the holder pod's node name and IP, {namespace}, {pod} and {capture} likewise.",
              { maxLength: 2048 },
            ),
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
            jobStarts: int(
              'Job starts begun under this claim; more than the recorded job means an earlier start was never recorded (what it produced is a spare).',
              { minimum: 0 },
            ),
            jobStartTime: time('When the latest job start began.'),
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
      'x-kubernetes-validations': [RULE_CLAIM_TOKEN_ISSUED, RULE_RESULT_TOKEN_ISSUED],
    },
    [
      RULE_EPOCH_NEVER_DECREASES,
      RULE_EPOCH_MOVES_WITH_NEW_CLAIM,
      RULE_NEW_HOLDER_NEW_TOKEN,
      RULE_RESULT_NEEDS_CLAIM_TOKEN,
    ],
  ),
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Holder', type: 'string', jsonPath: '.status.claim.holder.name' },
    { name: 'Token', type: 'integer', jsonPath: '.status.claim.token' },
    ...READY_COLUMNS,
    { name: 'Epoch', type: 'integer', jsonPath: '.status.epoch', priority: 1 },
    { name: 'Attempts', type: 'integer', jsonPath: '.status.attempts', priority: 1 },
    { name: 'Source Pod', type: 'string', jsonPath: '.status.result.capturedFrom.name', priority: 1 },
    { name: 'Result', type: 'string', jsonPath: '.status.result.ref', priority: 1 },
    READY_MESSAGE,
    AGE,
  ],
};
