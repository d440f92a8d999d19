// Policy `<prefix>-pool-pod-labels`: invariant P1 at the pod, for every writer. A pool pod (label
// claimkit.dev/pool, before or after the write) is never relabelled from one claim to another in a
// single write, its state label, claimed-by label and claimed-by-uid annotation agree, and only the
// controller names a claim, a template hash or a source (the claimkit.dev/source-* annotations of a
// pod seeded from a Capture's fenced result) on it (anyone may remove them). The same
// rules as the webhook's /validate/pods (core's admission/pods.ts), including when they
// apply: consistency is checked on create, and on update only when the write touches one of those
// keys, so pods that were inconsistent before the policy existed can still be repaired step by step.
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_SOURCE_CAPTURE,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  POD_STATES,
} from '../api/constants.ts';
import { LABEL_TEMPLATE_HASH } from '../pool/template-hash.ts';
import { celString, type ResolvedPolicyOptions } from './options.ts';
import { controllerIdentityVariables, POLICY_LABELS } from './podclaim-writers.ts';
import {
  ADMISSION_API_VERSION,
  type NamedExpression,
  type PolicyValidation,
  type ValidatingAdmissionPolicy,
} from './types.ts';

export const POOL_POD_LABELS = 'pool-pod-labels';

const q = celString;
/** CEL: the value under `key` in map variable `m`, or '' when absent. */
const valueOr = (m: string, key: string) => `${q(key)} in variables.${m} ? variables.${m}[${q(key)}] : ''`;
/** CEL: the key is added, removed or changed between the two map variables. */
const keyChanged = (oldM: string, newM: string, k: string) =>
  `(${k} in variables.${oldM}) != (${k} in variables.${newM}) || ` +
  `((${k} in variables.${newM}) && variables.${oldM}[${k}] != variables.${newM}[${k}])`;

/** The source annotations (pool/source.ts), each with the suffix of its old/new variables. */
const SOURCE_KEYS: [string, string][] = [
  ['SourceCapture', ANNOTATION_SOURCE_CAPTURE],
  ['SourceRef', ANNOTATION_SOURCE_REF],
  ['SourceToken', ANNOTATION_SOURCE_TOKEN],
];

const VARIABLES: NamedExpression[] = [
  {
    name: 'oldLabels',
    expression: 'oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}',
  },
  { name: 'newLabels', expression: 'has(object.metadata.labels) ? object.metadata.labels : {}' },
  {
    name: 'oldAnnotations',
    expression:
      'oldObject != null && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}',
  },
  {
    name: 'newAnnotations',
    expression: 'has(object.metadata.annotations) ? object.metadata.annotations : {}',
  },
  { name: 'oldClaim', expression: valueOr('oldLabels', LABEL_CLAIMED_BY) },
  { name: 'newClaim', expression: valueOr('newLabels', LABEL_CLAIMED_BY) },
  { name: 'oldClaimUid', expression: valueOr('oldAnnotations', ANNOTATION_CLAIMED_BY_UID) },
  { name: 'newClaimUid', expression: valueOr('newAnnotations', ANNOTATION_CLAIMED_BY_UID) },
  { name: 'newState', expression: valueOr('newLabels', LABEL_STATE) },
  { name: 'oldTemplateHash', expression: valueOr('oldLabels', LABEL_TEMPLATE_HASH) },
  { name: 'newTemplateHash', expression: valueOr('newLabels', LABEL_TEMPLATE_HASH) },
  ...SOURCE_KEYS.flatMap(([v, key]) => [
    { name: `old${v}`, expression: valueOr('oldAnnotations', key) },
    { name: `new${v}`, expression: valueOr('newAnnotations', key) },
  ]),
  {
    name: 'touched',
    expression:
      `request.operation == 'CREATE' || ` +
      `[${[LABEL_POOL, LABEL_STATE, LABEL_CLAIMED_BY].map(q).join(', ')}].exists(k, ${keyChanged('oldLabels', 'newLabels', 'k')}) || ` +
      keyChanged('oldAnnotations', 'newAnnotations', q(ANNOTATION_CLAIMED_BY_UID)),
  },
  { name: 'checkConsistency', expression: `${q(LABEL_POOL)} in variables.newLabels && variables.touched` },
];

const labelField = (k: string) => `metadata.labels[${k}]`;
const annotationField = (k: string) => `metadata.annotations[${k}]`;

const VALIDATIONS: PolicyValidation[] = [
  // P1, as admission/claim-handover.ts states it in TypeScript (policy-cases.test.ts: they agree).
  {
    expression:
      "variables.oldClaim == '' || variables.newClaim == '' || variables.oldClaim == variables.newClaim",
    message: `${labelField(LABEL_CLAIMED_BY)}: a pod is never relabelled from one claim to another in a single write; the label must be removed first`,
    messageExpression: `${q(`${labelField(LABEL_CLAIMED_BY)}: a pod is never relabelled from one claim to another in a single write (`)} + variables.oldClaim + ' -> ' + variables.newClaim + '); the label must be removed first'`,
    reason: 'Forbidden',
  },
  {
    expression:
      "variables.oldClaimUid == '' || variables.newClaimUid == '' || variables.oldClaimUid == variables.newClaimUid",
    message: `${annotationField(ANNOTATION_CLAIMED_BY_UID)}: a pod is never handed from one claim to another in a single write; the annotation must be removed first`,
    messageExpression: `${q(`${annotationField(ANNOTATION_CLAIMED_BY_UID)}: a pod is never handed from one claim to another in a single write (uid `)} + variables.oldClaimUid + ' -> ' + variables.newClaimUid + '); the annotation must be removed first'`,
    reason: 'Forbidden',
  },
  {
    expression: `!variables.checkConsistency || variables.newState in [${POD_STATES.map(q).join(', ')}]`,
    message: `${labelField(LABEL_STATE)}: a pool pod needs ${LABEL_STATE} in ${POD_STATES.join('|')}`,
    messageExpression: `${q(`${labelField(LABEL_STATE)}: a pool pod needs ${LABEL_STATE} in ${POD_STATES.join('|')}, got `)} + (${q(LABEL_STATE)} in variables.newLabels ? '"' + variables.newState + '"' : 'none')`,
    reason: 'Invalid',
  },
  {
    expression: "!variables.checkConsistency || variables.newState != 'Idle' || variables.newClaim == ''",
    message: `${labelField(LABEL_CLAIMED_BY)}: an Idle pod must not be claimed; set the state first or remove the label`,
    messageExpression: `${q(`${labelField(LABEL_CLAIMED_BY)}: an Idle pod must not be claimed (claimed-by `)} + variables.newClaim + '); set the state first or remove the label'`,
    reason: 'Invalid',
  },
  {
    expression: "!variables.checkConsistency || variables.newClaim == '' || variables.newClaimUid != ''",
    message: `${annotationField(ANNOTATION_CLAIMED_BY_UID)}: is required while ${LABEL_CLAIMED_BY} is set`,
    messageExpression: `${q(`${annotationField(ANNOTATION_CLAIMED_BY_UID)}: is required while ${LABEL_CLAIMED_BY} is set (`)} + variables.newClaim + ')'`,
    reason: 'Invalid',
  },
  {
    expression: "!variables.checkConsistency || variables.newClaim != '' || variables.newClaimUid == ''",
    message: `${annotationField(ANNOTATION_CLAIMED_BY_UID)}: must be removed together with ${LABEL_CLAIMED_BY}`,
    reason: 'Invalid',
  },
  // P1/P7 for every writer: a person may remove a claim's label but never name a claim, or a pod is
  // stolen in two writes (remove, then add another claim's name). Last, so the rules above report first.
  {
    expression:
      "variables.isController || variables.newClaim == '' || variables.newClaim == variables.oldClaim",
    message: `${labelField(LABEL_CLAIMED_BY)}: is set only by the claimkit controller; anyone may remove it`,
    messageExpression: `${q(`${labelField(LABEL_CLAIMED_BY)}: is set only by the claimkit controller, not by "`)} + request.userInfo.username + '"; anyone may remove it'`,
    reason: 'Forbidden',
  },
  {
    expression:
      "variables.isController || variables.newClaimUid == '' || variables.newClaimUid == variables.oldClaimUid",
    message: `${annotationField(ANNOTATION_CLAIMED_BY_UID)}: is set only by the claimkit controller; anyone may remove it`,
    messageExpression: `${q(`${annotationField(ANNOTATION_CLAIMED_BY_UID)}: is set only by the claimkit controller, not by "`)} + request.userInfo.username + '"; anyone may remove it'`,
    reason: 'Forbidden',
  },
  // The template hash says which template the pod was made from (rollout decides on it): a person
  // who sets it makes an outdated pod look current. Removing it only makes the pod outdated.
  {
    expression:
      "variables.isController || variables.newTemplateHash == '' || variables.newTemplateHash == variables.oldTemplateHash",
    message: `${labelField(LABEL_TEMPLATE_HASH)}: is set only by the claimkit controller; anyone may remove it`,
    messageExpression: `${q(`${labelField(LABEL_TEMPLATE_HASH)}: is set only by the claimkit controller, not by "`)} + request.userInfo.username + '"; anyone may remove it'`,
    reason: 'Forbidden',
  },
  // The source annotations say which fenced Capture result seeded the pod (only a fenced one may):
  // a person who sets them makes a pod look seeded from a result it was not started from.
  ...SOURCE_KEYS.map(
    ([v, key]): PolicyValidation => ({
      expression: `variables.isController || variables.new${v} == '' || variables.new${v} == variables.old${v}`,
      message: `${annotationField(key)}: is set only by the claimkit controller; anyone may remove it`,
      messageExpression: `${q(`${annotationField(key)}: is set only by the claimkit controller, not by "`)} + request.userInfo.username + '"; anyone may remove it'`,
      reason: 'Forbidden',
    }),
  ),
];

export function poolPodLabelsPolicy(o: ResolvedPolicyOptions): ValidatingAdmissionPolicy {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: `${o.namePrefix}-${POOL_POD_LABELS}`, labels: POLICY_LABELS },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            // pods/status too: a status write keeps only the spec, so it can change labels.
            resources: ['pods', 'pods/status'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Namespaced',
          },
        ],
        matchPolicy: 'Equivalent',
        objectSelector: { matchExpressions: [{ key: LABEL_POOL, operator: 'Exists' }] },
      },
      variables: [...controllerIdentityVariables(o), ...VARIABLES],
      validations: VALIDATIONS,
    },
  };
}
