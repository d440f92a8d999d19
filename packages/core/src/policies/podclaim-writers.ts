// Policy `<prefix>-podclaim-writers`: only the controller's identity sets or changes a PodClaim's
// binding, status.podName, status.nodeName, status.podUID or status.sourcePod (invariant P1 for every
// writer, kubectl included), or what an earlier release's claims keep of it: spec.podName,
// spec.nodeName, spec.sourcePod and the claimkit.dev/pod-uid record (anyone may remove that; the
// CRD's CEL refuses setting the spec fields at all).
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

/** The binding fields only the controller writes, in the order they are reported. */
const CONTROLLER_WRITTEN_FIELDS = [
  ['spec', 'podName'],
  ['spec', 'nodeName'],
  ['spec', 'sourcePod'],
  ['status', 'podName'],
  ['status', 'nodeName'],
  ['status', 'podUID'],
  ['status', 'sourcePod'],
] as const;

type WrittenField = (typeof CONTROLLER_WRITTEN_FIELDS)[number];

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

const varName = ([part, f]: WrittenField) => `${part}${cap(f)}`;

function fieldVariables(w: WrittenField): NamedExpression[] {
  const [part, f] = w;
  return [
    {
      name: `old${cap(varName(w))}`,
      expression: `oldObject != null && has(oldObject.${part}) && has(oldObject.${part}.${f}) ? oldObject.${part}.${f} : ''`,
    },
    {
      name: `new${cap(varName(w))}`,
      expression: `has(object.${part}) && has(object.${part}.${f}) ? object.${part}.${f} : ''`,
    },
  ];
}

function fieldValidation(w: WrittenField): PolicyValidation {
  const what = `${w[0]}.${w[1]}: is written only by the claimkit controller`;
  const v = cap(varName(w));
  return {
    expression: `variables.isController || variables.old${v} == variables.new${v}`,
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
        // The status subresource too: the binding is written there.
        resourceRules: [
          {
            apiGroups: [GROUP],
            apiVersions: [VERSION],
            resources: ['podclaims', 'podclaims/status'],
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
