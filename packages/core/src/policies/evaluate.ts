// The in-memory model's ValidatingAdmissionPolicy plugin: evaluates claimkit's policies (the same
// objects deploy/policies holds) with core's CEL, as kube-apiserver's validating policy plugin
// does: a binding's policy applies when its matchConstraints match the request (resource rule and
// operation; objectSelector against the new or the old object), variables are evaluated in order
// (each sees the earlier ones), validations in order, and the first that fails denies the request
// with its messageExpression (or message) and reason. An expression that cannot be evaluated
// denies too (failurePolicy Fail).

import type { AdmissionRequest, Violation } from '../api/admission-request.ts';
import { matchesSelector } from '../api/labels.ts';
import { KIND_INFO } from '../api/types.ts';
import { evaluateCel } from '../cel/index.ts';
import type { AdmissionCheck } from '../model/admission.ts';
import { admissionPolicies, type PolicyWithBinding } from './manifests.ts';
import type { ResourceRule, ValidatingAdmissionPolicy } from './types.ts';

/** The group and plural resource a request writes, as the policies' resource rules name them. */
function resourceOf(req: AdmissionRequest): { group: string; resource: string } {
  const info = KIND_INFO[req.kind];
  return {
    group: info.apiVersion.includes('/') ? info.apiVersion.split('/')[0]! : '',
    resource: info.plural,
  };
}

function ruleMatches(rule: ResourceRule, req: AdmissionRequest): boolean {
  const { group, resource } = resourceOf(req);
  const written = req.subResource ? `${resource}/${req.subResource}` : resource;
  return (
    rule.apiGroups.some((g) => g === '*' || g === group) &&
    rule.resources.some((r) => r === '*' || r === written) &&
    rule.operations.some((o) => o === req.operation)
  );
}

function labelsOf(o: unknown): Record<string, string> {
  const meta = (o as { metadata?: { labels?: Record<string, string> } } | null | undefined)?.metadata;
  return meta?.labels ?? {};
}

function policyMatches(policy: ValidatingAdmissionPolicy, req: AdmissionRequest): boolean {
  const m = policy.spec.matchConstraints;
  if (!m.resourceRules.some((r) => ruleMatches(r, req))) return false;
  if (!m.objectSelector) return true;
  return (
    (req.object != null && matchesSelector(labelsOf(req.object), m.objectSelector)) ||
    (req.oldObject != null && matchesSelector(labelsOf(req.oldObject), m.objectSelector))
  );
}

/** The first validation that fails, or undefined when the policy admits the request. */
export function evaluatePolicy(
  policy: ValidatingAdmissionPolicy,
  req: AdmissionRequest,
): { message: string; reason: 'Invalid' | 'Forbidden' } | undefined {
  if (!policyMatches(policy, req)) return undefined;
  // The request as CEL sees it (admission.k8s.io AdmissionRequest, the fields the policies read).
  const request = {
    operation: req.operation,
    namespace: req.namespace ?? '',
    name: req.name ?? '',
    resource: resourceOf(req),
    ...(req.subResource ? { subResource: req.subResource } : {}),
    userInfo: { username: req.userInfo.username ?? '', groups: req.userInfo.groups ?? [] },
  };
  const variables: Record<string, unknown> = {};
  const object = req.object ?? null;
  const oldObject = req.oldObject ?? null;
  const bindings = () => ({ object, oldObject, request, variables });
  const failed = (what: string, error: string) => ({
    message: `policy '${policy.metadata.name}' ${what} could not be evaluated: ${error}`,
    reason: 'Invalid' as const,
  });
  for (const v of policy.spec.variables) {
    const out = evaluateCel(v.expression, bindings());
    if (!out.ok) return failed(`variable ${v.name}`, out.error.message);
    variables[v.name] = out.value;
  }
  for (const val of policy.spec.validations) {
    const out = evaluateCel(val.expression, bindings());
    if (!out.ok) return failed('validation', out.error.message);
    if (out.value === true) continue;
    let message = val.message;
    if (val.messageExpression) {
      const m = evaluateCel(val.messageExpression, bindings());
      if (m.ok && typeof m.value === 'string' && m.value !== '') message = m.value;
    }
    return { message, reason: val.reason };
  }
  return undefined;
}

/**
 * An admission check for the in-memory model that enforces these policies (default: claimkit's,
 * with the default controller identity). Bindings that select namespaces by label are not modelled
 * (the model has no namespace objects). A policy's message names its field in its text, so its
 * violation's `field` is empty, as the API server's cause is.
 */
export function policyAdmission(
  policies: readonly PolicyWithBinding[] = Object.values(admissionPolicies()),
): AdmissionCheck {
  for (const { binding } of policies) {
    if (binding.spec.matchResources?.namespaceSelector)
      throw new Error(`policy binding ${binding.metadata.name}: the model cannot match a namespaceSelector`);
  }
  return (req) => {
    const denials: Violation[] = [];
    for (const { policy, binding } of policies) {
      const d = evaluatePolicy(policy, req);
      if (d) {
        denials.push({
          field: '',
          message: d.message,
          reason: d.reason,
          by: { policy: policy.metadata.name, binding: binding.metadata.name },
        });
      }
    }
    return denials;
  };
}
