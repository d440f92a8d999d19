// The admissionregistration.k8s.io/v1 shapes claimkit's policies use, as plain data: the policies
// are written once here and rendered to deploy/policies, the Helm chart and `claimctl manifests`,
// and the in-memory model evaluates the same expressions.

import type { LabelSelector } from '../api/meta.ts';

export const ADMISSION_API_VERSION = 'admissionregistration.k8s.io/v1';

/** A CEL expression with a name: a policy variable (`variables.<name>`) or a match condition. */
export type NamedExpression = {
  name: string;
  expression: string;
};

/** HTTP reason of a refusal: Forbidden answers 403, Invalid 422. */
export type ValidationReason = 'Forbidden' | 'Invalid';

export type PolicyValidation = {
  /** Must be true for the write to pass. */
  expression: string;
  /** The refusal text when messageExpression cannot be evaluated. */
  message: string;
  /** The refusal text as a CEL string expression, naming the values involved. */
  messageExpression?: string;
  reason: ValidationReason;
};

export type ResourceRule = {
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  operations: ('CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT')[];
  scope: 'Namespaced';
};

export type ValidatingAdmissionPolicy = {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'ValidatingAdmissionPolicy';
  metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    failurePolicy: 'Fail';
    matchConstraints: {
      resourceRules: ResourceRule[];
      matchPolicy: 'Equivalent';
      /** Matches an UPDATE when either the old or the new object matches. */
      objectSelector?: LabelSelector;
    };
    /** Evaluated in order; a later one may use an earlier one. */
    variables: NamedExpression[];
    /** Evaluated in order; the API server reports the first that fails. */
    validations: PolicyValidation[];
  };
};

export type ValidatingAdmissionPolicyBinding = {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'ValidatingAdmissionPolicyBinding';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    policyName: string;
    validationActions: ['Deny'];
    matchResources?: { namespaceSelector?: LabelSelector };
  };
};
