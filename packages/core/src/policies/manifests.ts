// The `policies` component: each ValidatingAdmissionPolicy with its binding (validationActions
// Deny), and deploy/policies/*.yaml as data (tools/manifests writes them and checks they are current).
import type { ManifestFile } from '../manifests/manifest-file.ts';
import { type PolicyOptions, type ResolvedPolicyOptions, resolvePolicyOptions } from './options.ts';
import { PODCLAIM_WRITERS, POLICY_LABELS, podClaimWritersPolicy } from './podclaim-writers.ts';
import { POOL_POD_LABELS, poolPodLabelsPolicy } from './pool-pod-labels.ts';
import {
  ADMISSION_API_VERSION,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from './types.ts';

export const POLICY_NAMES = [PODCLAIM_WRITERS, POOL_POD_LABELS] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export interface PolicyWithBinding {
  policy: ValidatingAdmissionPolicy;
  binding: ValidatingAdmissionPolicyBinding;
}

function bindingFor(
  policy: ValidatingAdmissionPolicy,
  o: ResolvedPolicyOptions,
): ValidatingAdmissionPolicyBinding {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policy.metadata.name, labels: POLICY_LABELS },
    spec: {
      policyName: policy.metadata.name,
      validationActions: ['Deny'],
      ...(o.namespaceSelector ? { matchResources: { namespaceSelector: o.namespaceSelector } } : {}),
    },
  };
}

/** Every claimkit policy with its binding, by name. Throws PolicyOptionsError on bad options. */
export function admissionPolicies(opts: PolicyOptions = {}): Record<PolicyName, PolicyWithBinding> {
  const o = resolvePolicyOptions(opts);
  const claims = podClaimWritersPolicy(o);
  const pods = poolPodLabelsPolicy(o);
  return {
    [PODCLAIM_WRITERS]: { policy: claims, binding: bindingFor(claims, o) },
    [POOL_POD_LABELS]: { policy: pods, binding: bindingFor(pods, o) },
  };
}

/** The objects to create, each policy before its binding. */
export function admissionPolicyObjects(
  opts: PolicyOptions = {},
): (ValidatingAdmissionPolicy | ValidatingAdmissionPolicyBinding)[] {
  return Object.values(admissionPolicies(opts)).flatMap((p) => [p.policy, p.binding]);
}

/** Every file of deploy/policies, as objects. */
export function policiesManifests(): ManifestFile[] {
  const p = admissionPolicies();
  return [
    {
      file: `${PODCLAIM_WRITERS}.yaml`,
      comment:
        "Only the controller's identity (ServiceAccount claimkit-system/claimkit-controller; change the variables controllerUsernames and controllerGroups, or use the Helm chart's policies values) sets or changes a PodClaim's spec.podName, spec.nodeName or spec.sourcePod.",
      objects: [p[PODCLAIM_WRITERS].policy, p[PODCLAIM_WRITERS].binding],
    },
    {
      file: `${POOL_POD_LABELS}.yaml`,
      comment:
        'Pods labelled claimkit.dev/pool: no direct relabel from one claim to another; state label, claimed-by label and claimed-by-uid annotation agree (checked when a write touches them).',
      objects: [p[POOL_POD_LABELS].policy, p[POOL_POD_LABELS].binding],
    },
    {
      file: 'kustomization.yaml',
      comment: 'kubectl apply -k deploy/policies (Kubernetes 1.30 or newer; no runtime to run).',
      objects: [
        {
          apiVersion: 'kustomize.config.k8s.io/v1beta1',
          kind: 'Kustomization',
          resources: [`${PODCLAIM_WRITERS}.yaml`, `${POOL_POD_LABELS}.yaml`],
        },
      ],
    },
  ];
}
