// Policy `<prefix>-podclaim-writers`: only the controller's identity sets or changes a PodClaim's
// spec.podName, spec.nodeName or spec.sourcePod (invariant P1 for every writer, kubectl included),
// or its claimkit.dev/pod-uid record of the pod it bound (anyone may remove that).
// The same rule as the webhook's /validate/podclaims (core's admission/podclaims.ts):
// absent, null and "" all mean "not set", so clearing an empty field is no change; the controller
// is a listed username or a member of a listed group. Whether another claim already references
// the pod needs other objects and stays with the webhook.
import { ANNOTATION_POD_UID, GROUP, VERSION } from '../api/constants.ts';
import { celString, celStringList, type ResolvedPolicyOptions } from './options.ts';
import {
  ADMISSION_API_VERSION,
  type NamedExpression,
  type PolicyValidation,
  type ValidatingAdmissionPolicy,
} from './types.ts';

export const PODCLAIM_WRITERS = 'podclaim-writers';

/** The spec fields only the controller writes, in the order they are reported. */
const CONTROLLER_WRITTEN_FIELDS = ['podName', 'nodeName', 'sourcePod'] as const;

export const POLICY_LABELS = {
  'app.kubernetes.io/name': 'claimkit',
  'app.kubernetes.io/component': 'policies',
};

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

/** `variables.controllerUsernames` / `variables.controllerGroups`: the identities that count as the controller. */
export function controllerIdentityVariables(o: ResolvedPolicyOptions): NamedExpression[] {
  return [
    { name: 'controllerUsernames', expression: celStringList(o.controllerUsernames) },
    { name: 'controllerGroups', expression: celStringList(o.controllerGroups) },
    {
      name: 'isController',
      expression:
        'request.userInfo.username in variables.controllerUsernames || ' +
        '(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in variables.controllerGroups))',
    },
  ];
}

function fieldVariables(f: string): NamedExpression[] {
  return [
    {
      name: `old${cap(f)}`,
      expression: `oldObject != null && has(oldObject.spec) && has(oldObject.spec.${f}) ? oldObject.spec.${f} : ''`,
    },
    { name: `new${cap(f)}`, expression: `has(object.spec) && has(object.spec.${f}) ? object.spec.${f} : ''` },
  ];
}

function fieldValidation(f: string): PolicyValidation {
  const what = `spec.${f}: is written only by the claimkit controller`;
  return {
    expression: `variables.isController || variables.old${cap(f)} == variables.new${cap(f)}`,
    message: what,
    messageExpression: `${celString(`${what}, not by "`)} + request.userInfo.username + '"'`,
    reason: 'Forbidden',
  };
}

/** The record of the pod the claim bound (pool/bound-pod.ts): set only by the controller; anyone may remove it. */
const POD_UID_VARIABLES: NamedExpression[] = [
  {
    name: 'oldPodUid',
    expression: `oldObject != null && has(oldObject.metadata.annotations) && ${celString(ANNOTATION_POD_UID)} in oldObject.metadata.annotations ? oldObject.metadata.annotations[${celString(ANNOTATION_POD_UID)}] : ''`,
  },
  {
    name: 'newPodUid',
    expression: `has(object.metadata.annotations) && ${celString(ANNOTATION_POD_UID)} in object.metadata.annotations ? object.metadata.annotations[${celString(ANNOTATION_POD_UID)}] : ''`,
  },
];

const POD_UID_VALIDATION: PolicyValidation = {
  expression:
    "variables.isController || variables.newPodUid == '' || variables.newPodUid == variables.oldPodUid",
  message: `metadata.annotations[${ANNOTATION_POD_UID}]: is set only by the claimkit controller; anyone may remove it`,
  messageExpression: `${celString(`metadata.annotations[${ANNOTATION_POD_UID}]: is set only by the claimkit controller, not by "`)} + request.userInfo.username + '"; anyone may remove it'`,
  reason: 'Forbidden',
};

export function podClaimWritersPolicy(o: ResolvedPolicyOptions): ValidatingAdmissionPolicy {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: `${o.namePrefix}-${PODCLAIM_WRITERS}`, labels: POLICY_LABELS },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        // The main resource only: the status subresource cannot change spec.
        resourceRules: [
          {
            apiGroups: [GROUP],
            apiVersions: [VERSION],
            resources: ['podclaims'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Namespaced',
          },
        ],
        matchPolicy: 'Equivalent',
      },
      variables: [
        ...controllerIdentityVariables(o),
        ...CONTROLLER_WRITTEN_FIELDS.flatMap(fieldVariables),
        ...POD_UID_VARIABLES,
      ],
      validations: [...CONTROLLER_WRITTEN_FIELDS.map(fieldValidation), POD_UID_VALIDATION],
    },
  };
}
