// What the policies allow and refuse, as data: one admission request per case and the expected
// answer. The e2e suite replays every case on the real API server (dry-run writes); an evaluator
// of the policies' CEL (the in-memory model) can run the same requests through `policyCaseRequest`,
// so both answer the same.
import type { AdmissionRequest } from '../api/admission-request.ts';
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_POD_UID,
  ANNOTATION_SOURCE_CAPTURE,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  ANNOTATION_TRACEPARENT,
  API_VERSION,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
} from '../api/constants.ts';
import { LABEL_TEMPLATE_HASH } from '../pool/template-hash.ts';
import type { PolicyName } from './manifests.ts';
import type { ValidationReason } from './types.ts';

type StringMap = Record<string, string>;

export type PodMetadataCase = { labels?: StringMap; annotations?: StringMap };
export type ClaimSpecCase = { podName?: string; nodeName?: string; sourcePod?: string };
export type ClaimStatusCase = { podName?: string; nodeName?: string; podUID?: string; sourcePod?: string };
/** A claim: `spec` (an earlier release's binding fields), `status` (the binding) and annotations. */
export type ClaimCaseObject = { spec?: ClaimSpecCase; status?: ClaimStatusCase; annotations?: StringMap };

/**
 * Who writes: the controller's username, a member of a controller group, or anyone else.
 * Pod cases write as `other` unless they name a claim (only the controller does).
 */
export type PolicyCaseWriter = 'controller' | 'controller-group' | 'other';

export type PolicyCaseExpectation =
  | { allowed: true }
  | { allowed: false; reason: ValidationReason; message: string };

type CaseBase = {
  name: string;
  operation: 'CREATE' | 'UPDATE';
  writer: PolicyCaseWriter;
  /** `message` is a part of the refusal text (the API server adds the policy and binding names). */
  expect: PolicyCaseExpectation;
};

export type PodPolicyCase = CaseBase & {
  policy: Extract<PolicyName, 'pool-pod-labels'>;
  /** UPDATE only: the pod before the write. */
  old?: PodMetadataCase;
  new: PodMetadataCase;
};

export type ClaimPolicyCase = CaseBase & {
  policy: Extract<PolicyName, 'podclaim-writers'>;
  /** A write to the status subresource (where the binding is), else to the claim itself. */
  subresource?: 'status';
  old?: ClaimCaseObject;
  new: ClaimCaseObject;
};

export type PolicyCase = PodPolicyCase | ClaimPolicyCase;

const POOL = { [LABEL_POOL]: 'web' };
const claimedBy = (claim: string, state = 'Bound'): PodMetadataCase => ({
  labels: { ...POOL, [LABEL_STATE]: state, [LABEL_CLAIMED_BY]: claim },
  annotations: { [ANNOTATION_CLAIMED_BY_UID]: `uid-${claim}` },
});
const state = (s: string): PodMetadataCase => ({ labels: { ...POOL, [LABEL_STATE]: s } });
const hashed = (hash: string, s: string): PodMetadataCase => ({
  labels: { ...POOL, [LABEL_STATE]: s, [LABEL_TEMPLATE_HASH]: hash },
});
const seeded = (token: string, ref = 'snapshot://web/7'): PodMetadataCase => ({
  labels: { ...POOL, [LABEL_STATE]: 'Idle' },
  annotations: { [ANNOTATION_SOURCE_TOKEN]: token, [ANNOTATION_SOURCE_REF]: ref },
});
const allowed: PolicyCaseExpectation = { allowed: true };
const refused = (reason: ValidationReason, message: string): PolicyCaseExpectation => ({
  allowed: false,
  reason,
  message,
});

/** The username the `other` writer's refusals name; runners substitute the real one. */
const OTHER_USER_PLACEHOLDER = '<other>';

const pod = (c: Omit<PodPolicyCase, 'policy' | 'writer'> & { writer?: PolicyCaseWriter }): PodPolicyCase => ({
  policy: 'pool-pod-labels',
  writer: 'other',
  ...c,
});
const claim = (c: Omit<ClaimPolicyCase, 'policy'>): ClaimPolicyCase => ({ policy: 'podclaim-writers', ...c });
const notController = (field: string) =>
  refused(
    'Forbidden',
    `${field}: is written only by the claimkit controller, not by "${OTHER_USER_PLACEHOLDER}"`,
  );

export const POLICY_CASES: readonly PolicyCase[] = [
  pod({ name: 'an Idle pool pod is created', operation: 'CREATE', new: state('Idle'), expect: allowed }),
  pod({
    name: 'a pool pod with an unknown state is refused',
    operation: 'CREATE',
    new: state('NoSuchState'),
    expect: refused('Invalid', `a pool pod needs ${LABEL_STATE} in Idle|Bound|Draining, got "NoSuchState"`),
  }),
  pod({
    name: 'a pool pod without a state is refused',
    operation: 'CREATE',
    new: { labels: POOL },
    expect: refused('Invalid', 'got none'),
  }),
  pod({
    name: 'an Idle pod cannot be claimed',
    operation: 'CREATE',
    new: claimedBy('a', 'Idle'),
    expect: refused('Invalid', 'an Idle pod must not be claimed (claimed-by a)'),
  }),
  pod({
    name: 'claimed-by needs the claimed-by-uid annotation',
    operation: 'CREATE',
    new: { labels: { ...POOL, [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'a' } },
    expect: refused(
      'Invalid',
      `metadata.annotations[${ANNOTATION_CLAIMED_BY_UID}]: is required while ${LABEL_CLAIMED_BY} is set (a)`,
    ),
  }),
  pod({
    name: 'a pod that is not in a pool is not checked',
    operation: 'CREATE',
    new: { labels: { [LABEL_STATE]: 'NoSuchState', [LABEL_CLAIMED_BY]: 'a' } },
    expect: allowed,
  }),
  pod({
    name: 'a direct relabel from claim a to claim b is refused',
    operation: 'UPDATE',
    old: claimedBy('a'),
    new: claimedBy('b'),
    expect: refused(
      'Forbidden',
      `metadata.labels[${LABEL_CLAIMED_BY}]: a pod is never relabelled from one claim to another in a single write (a -> b); the label must be removed first`,
    ),
  }),
  pod({
    name: 'a direct hand-over of the claimed-by-uid is refused',
    operation: 'UPDATE',
    old: claimedBy('a'),
    new: { labels: claimedBy('a').labels, annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'uid-b' } },
    expect: refused(
      'Forbidden',
      'a pod is never handed from one claim to another in a single write (uid uid-a -> uid-b)',
    ),
  }),
  pod({
    name: 'removing claimed-by and its uid together is allowed',
    operation: 'UPDATE',
    old: claimedBy('a'),
    new: { labels: { ...POOL, [LABEL_STATE]: 'Bound' }, annotations: {} },
    expect: allowed,
  }),
  pod({
    name: 'the controller labels an unclaimed Bound pod for claim b',
    operation: 'UPDATE',
    writer: 'controller',
    old: { labels: { ...POOL, [LABEL_STATE]: 'Bound' } },
    new: claimedBy('b'),
    expect: allowed,
  }),
  pod({
    name: 'a person labelling an unclaimed pod for a claim is refused (a theft in two writes)',
    operation: 'UPDATE',
    old: { labels: { ...POOL, [LABEL_STATE]: 'Bound' } },
    new: claimedBy('b'),
    expect: refused(
      'Forbidden',
      `metadata.labels[${LABEL_CLAIMED_BY}]: is set only by the claimkit controller, not by "${OTHER_USER_PLACEHOLDER}"; anyone may remove it`,
    ),
  }),
  pod({
    name: 'a person adding only the claimed-by-uid annotation is refused',
    operation: 'UPDATE',
    old: { labels: { ...POOL, [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'b' } },
    new: claimedBy('b'),
    expect: refused('Forbidden', 'is set only by the claimkit controller'),
  }),
  pod({
    name: 'a member of a controller group labels a pod for a claim',
    operation: 'UPDATE',
    writer: 'controller-group',
    old: { labels: { ...POOL, [LABEL_STATE]: 'Bound' } },
    new: claimedBy('b'),
    expect: allowed,
  }),
  pod({
    name: 'a person setting the template hash of a pool pod is refused (an outdated pod made to look current)',
    operation: 'UPDATE',
    old: hashed('old0', 'Idle'),
    new: hashed('cur1', 'Idle'),
    expect: refused(
      'Forbidden',
      `metadata.labels[${LABEL_TEMPLATE_HASH}]: is set only by the claimkit controller, not by "${OTHER_USER_PLACEHOLDER}"; anyone may remove it`,
    ),
  }),
  pod({
    name: 'a person creating a pool pod with a template hash is refused',
    operation: 'CREATE',
    new: hashed('cur1', 'Idle'),
    expect: refused(
      'Forbidden',
      `metadata.labels[${LABEL_TEMPLATE_HASH}]: is set only by the claimkit controller`,
    ),
  }),
  pod({
    name: 'a person removing the template hash is allowed (the pod is then outdated and replaced)',
    operation: 'UPDATE',
    old: hashed('old0', 'Idle'),
    new: state('Idle'),
    expect: allowed,
  }),
  pod({
    name: "a person's other edits leave the template hash alone and pass",
    operation: 'UPDATE',
    old: hashed('old0', 'Idle'),
    new: { labels: { ...hashed('old0', 'Idle').labels, app: 'web' } },
    expect: allowed,
  }),
  pod({
    name: 'the controller creates a pool pod with its template hash',
    operation: 'CREATE',
    writer: 'controller',
    new: hashed('cur1', 'Idle'),
    expect: allowed,
  }),
  pod({
    name: 'a person changing the source token of a seeded pool pod is refused (a pod made to look seeded from another result)',
    operation: 'UPDATE',
    old: seeded('7'),
    new: seeded('8'),
    expect: refused(
      'Forbidden',
      `metadata.annotations[${ANNOTATION_SOURCE_TOKEN}]: is set only by the claimkit controller, not by "${OTHER_USER_PLACEHOLDER}"; anyone may remove it`,
    ),
  }),
  pod({
    name: 'a person creating a pool pod with a source ref is refused',
    operation: 'CREATE',
    new: seeded('7'),
    expect: refused(
      'Forbidden',
      `metadata.annotations[${ANNOTATION_SOURCE_REF}]: is set only by the claimkit controller`,
    ),
  }),
  pod({
    name: 'a person naming another source capture on a pool pod is refused',
    operation: 'UPDATE',
    old: state('Idle'),
    new: {
      labels: { ...POOL, [LABEL_STATE]: 'Idle' },
      annotations: { [ANNOTATION_SOURCE_CAPTURE]: 'other' },
    },
    expect: refused(
      'Forbidden',
      `metadata.annotations[${ANNOTATION_SOURCE_CAPTURE}]: is set only by the claimkit controller`,
    ),
  }),
  pod({
    name: 'a person removing the source annotations is allowed',
    operation: 'UPDATE',
    old: seeded('7'),
    new: state('Idle'),
    expect: allowed,
  }),
  pod({
    name: 'the controller creates a pool pod seeded from a fenced result',
    operation: 'CREATE',
    writer: 'controller',
    new: seeded('7'),
    expect: allowed,
  }),
  pod({
    name: 'removing claimed-by but keeping its uid is refused',
    operation: 'UPDATE',
    old: claimedBy('a'),
    new: { labels: { ...POOL, [LABEL_STATE]: 'Bound' }, annotations: claimedBy('a').annotations },
    expect: refused('Invalid', `must be removed together with ${LABEL_CLAIMED_BY}`),
  }),
  pod({
    name: 'an inconsistent pod accepts writes that leave those keys alone',
    operation: 'UPDATE',
    old: claimedBy('a', 'Idle'),
    new: {
      labels: { ...claimedBy('a', 'Idle').labels, app: 'web' },
      annotations: claimedBy('a').annotations,
    },
    expect: allowed,
  }),
  pod({
    name: 'an inconsistent pod can be repaired step by step',
    operation: 'UPDATE',
    old: claimedBy('a', 'Idle'),
    new: claimedBy('a', 'Bound'),
    expect: allowed,
  }),
  pod({
    name: 'a write that also removes the pool label is still checked for relabels',
    operation: 'UPDATE',
    old: claimedBy('a'),
    new: {
      labels: { [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: 'b' },
      annotations: { [ANNOTATION_CLAIMED_BY_UID]: 'uid-b' },
    },
    expect: refused('Forbidden', 'never relabelled from one claim to another in a single write (a -> b)'),
  }),
  claim({
    name: 'anyone creates a claim without a pod',
    operation: 'CREATE',
    writer: 'other',
    new: { spec: {} },
    expect: allowed,
  }),
  claim({
    name: 'another user cannot create a claim with a podName',
    operation: 'CREATE',
    writer: 'other',
    new: { spec: { podName: 'pod-x' } },
    expect: notController('spec.podName'),
  }),
  claim({
    name: 'another user cannot set the record of the bound pod (claimkit.dev/pod-uid)',
    operation: 'UPDATE',
    writer: 'other',
    old: { spec: { podName: 'pod-x' }, annotations: { [ANNOTATION_POD_UID]: 'pod-x/uid-1' } },
    new: { spec: { podName: 'pod-x' }, annotations: { [ANNOTATION_POD_UID]: 'pod-x/uid-2' } },
    expect: refused(
      'Forbidden',
      `metadata.annotations[${ANNOTATION_POD_UID}]: is set only by the claimkit controller, not by "${OTHER_USER_PLACEHOLDER}"; anyone may remove it`,
    ),
  }),
  claim({
    name: 'another user may remove the record of the bound pod',
    operation: 'UPDATE',
    writer: 'other',
    old: { spec: { podName: 'pod-x' }, annotations: { [ANNOTATION_POD_UID]: 'pod-x/uid-1' } },
    new: { spec: { podName: 'pod-x' }, annotations: {} },
    expect: allowed,
  }),
  claim({
    name: 'the controller clears a binding an earlier release kept in spec',
    operation: 'UPDATE',
    writer: 'controller',
    old: {
      spec: { podName: 'pod-x', nodeName: 'node-1' },
      annotations: { [ANNOTATION_POD_UID]: 'pod-x/uid-1' },
    },
    new: { spec: {}, annotations: {} },
    expect: allowed,
  }),
  claim({
    name: 'the controller records the claim’s trace (claimkit.dev/traceparent) with the finalizer',
    operation: 'UPDATE',
    writer: 'controller',
    old: { spec: {} },
    new: {
      spec: {},
      annotations: { [ANNOTATION_TRACEPARENT]: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` },
    },
    expect: allowed,
  }),
  claim({
    name: 'anyone may create a claim in their own trace (claimkit.dev/traceparent names trace ids only)',
    operation: 'CREATE',
    writer: 'other',
    new: {
      spec: {},
      annotations: { [ANNOTATION_TRACEPARENT]: `00-${'12'.repeat(16)}-${'34'.repeat(8)}-01` },
    },
    expect: allowed,
  }),
  claim({
    name: 'another user cannot clear a legacy sourcePod',
    operation: 'UPDATE',
    writer: 'other',
    old: { spec: { podName: 'pod-y', sourcePod: 'pod-x' } },
    new: { spec: { podName: 'pod-y' } },
    expect: notController('spec.sourcePod'),
  }),
  claim({
    name: 'another user may edit a bound claim when those fields stay',
    operation: 'UPDATE',
    writer: 'other',
    old: { spec: { podName: 'pod-x', nodeName: 'node-1' } },
    new: {
      spec: { podName: 'pod-x', nodeName: 'node-1' },
      annotations: { 'claimkit.dev/migrate': 'rebalance' },
    },
    expect: allowed,
  }),
  claim({
    name: 'an empty podName is no podName',
    operation: 'UPDATE',
    writer: 'other',
    old: { spec: {} },
    new: { spec: { podName: '' } },
    expect: allowed,
  }),
  claim({
    name: 'another user cannot set status.podName',
    operation: 'UPDATE',
    subresource: 'status',
    writer: 'other',
    old: {},
    new: { status: { podName: 'pod-x' } },
    expect: notController('status.podName'),
  }),
  claim({
    name: 'another user cannot change status.nodeName',
    operation: 'UPDATE',
    subresource: 'status',
    writer: 'other',
    old: { status: { podName: 'pod-x', nodeName: 'node-1' } },
    new: { status: { podName: 'pod-x', nodeName: 'node-2' } },
    expect: notController('status.nodeName'),
  }),
  claim({
    name: 'another user cannot change status.podUID',
    operation: 'UPDATE',
    subresource: 'status',
    writer: 'other',
    old: { status: { podName: 'pod-x', podUID: 'uid-1' } },
    new: { status: { podName: 'pod-x', podUID: 'uid-2' } },
    expect: notController('status.podUID'),
  }),
  claim({
    name: 'another user cannot clear status.sourcePod',
    operation: 'UPDATE',
    subresource: 'status',
    writer: 'other',
    old: { status: { podName: 'pod-y', sourcePod: 'pod-x' } },
    new: { status: { podName: 'pod-y' } },
    expect: notController('status.sourcePod'),
  }),
  claim({
    name: 'another user may write the rest of a bound claim’s status',
    operation: 'UPDATE',
    subresource: 'status',
    writer: 'other',
    old: { status: { podName: 'pod-x', nodeName: 'node-1' } },
    new: { status: { podName: 'pod-x', nodeName: 'node-1' } },
    expect: allowed,
  }),
  claim({
    name: 'the controller binds',
    operation: 'UPDATE',
    subresource: 'status',
    writer: 'controller',
    old: {},
    new: { status: { podName: 'pod-x', nodeName: 'node-1', podUID: 'uid-1' } },
    expect: allowed,
  }),
  claim({
    name: 'the controller migrates',
    operation: 'UPDATE',
    subresource: 'status',
    writer: 'controller',
    old: { status: { podName: 'pod-x', nodeName: 'node-1', podUID: 'uid-1' } },
    new: { status: { podName: 'pod-y', nodeName: 'node-2', podUID: 'uid-2', sourcePod: 'pod-x' } },
    expect: allowed,
  }),
  claim({
    name: 'a member of a controller group writes like the controller',
    operation: 'UPDATE',
    subresource: 'status',
    writer: 'controller-group',
    old: {},
    new: { status: { podName: 'pod-x' } },
    expect: allowed,
  }),
];

export type PolicyCaseUsers = {
  controller: { username: string; groups?: string[] };
  controllerGroup: { username: string; groups: string[] };
  other: { username: string; groups?: string[] };
};

/** A case's write as admission sees it: core's one request type. */
export type PolicyCaseRequest = AdmissionRequest<Record<string, unknown>>;

/** The pod or claim a case writes (`which`: before or after the write). */
export function policyCaseObject(
  c: PolicyCase,
  which: 'old' | 'new',
  key: { namespace: string; name: string },
): Record<string, unknown> {
  const side = which === 'old' ? c.old : c.new;
  if (side === undefined) throw new Error(`case ${JSON.stringify(c.name)} has no ${which} object`);
  if (c.policy === 'pool-pod-labels') {
    const m = side as PodMetadataCase;
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...key, labels: { ...m.labels }, annotations: { ...m.annotations } },
      spec: { containers: [{ name: 'main', image: 'registry.example/claimkit/app:1' }] },
    };
  }
  const o = side as ClaimCaseObject;
  return {
    apiVersion: API_VERSION,
    kind: 'PodClaim',
    metadata: { ...key, annotations: { ...o.annotations } },
    spec: { poolName: 'web', ...o.spec },
    ...(o.status ? { status: { ...o.status } } : {}),
  };
}

/** The admission request of a case, for an evaluator of the policies. */
export function policyCaseRequest(
  c: PolicyCase,
  users: PolicyCaseUsers,
  key: { namespace: string; name: string } = { namespace: 'default', name: 'case' },
): PolicyCaseRequest {
  const user =
    c.writer === 'controller'
      ? users.controller
      : c.writer === 'controller-group'
        ? users.controllerGroup
        : users.other;
  return {
    operation: c.operation,
    kind: c.policy === 'pool-pod-labels' ? 'Pod' : 'PodClaim',
    ...(c.policy === 'podclaim-writers' && c.subresource ? { subResource: c.subresource } : {}),
    ...key,
    userInfo: user,
    object: policyCaseObject(c, 'new', key),
    oldObject: c.operation === 'UPDATE' ? policyCaseObject(c, 'old', key) : undefined,
  };
}

/** The refusal text a case expects, with the `other` writer's real username. */
export function expectedPolicyMessage(c: PolicyCase, otherUsername: string): string | undefined {
  return c.expect.allowed ? undefined : c.expect.message.replaceAll(OTHER_USER_PLACEHOLDER, otherUsername);
}
