// Who writes, and the validating admission step of the in-memory API model. Every write carries a
// user (as the API server's authenticator reports it); after schema validation the model asks each
// admission check, as kube-apiserver runs ValidatingAdmissionPolicies and webhooks after the
// object's schema (and CEL) validation. The request and violation are core's one admission shape
// (api/admission-request.ts). A policy's denial answers as on the real server
// (apiserver/pkg/admission/plugin/policy/validating/dispatcher.go): reason Invalid / HTTP 422 unless
// the validation names another reason (Forbidden: 403), message `<resource> "<name>" is forbidden:
// ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request: <message>`, and that
// text as the one cause; a webhook's as `admission webhook "<name>" denied the request: <message>`.

import {
  type AdmissionRequest,
  denialMessage,
  type Operation,
  type UserInfo,
  type Violation,
} from '../api/admission-request.ts';
import { CONTROLLER_NAME, SYSTEM_NAMESPACE } from '../api/constants.ts';
import { ApiError } from '../api/errors.ts';
import type { KubeObject } from '../api/meta.ts';
import { KIND_INFO, type Kind } from '../api/types.ts';

export type { AdmissionRequest, UserInfo, Violation };

/** The namespace the controller's service account lives in (deploy/controller). */
const CONTROLLER_SERVICE_ACCOUNT_NAMESPACE = SYSTEM_NAMESPACE;

/** The controller's identity: what the model's own Client methods write as. */
export const CONTROLLER_USER: UserInfo = {
  username: `system:serviceaccount:${CONTROLLER_SERVICE_ACCOUNT_NAMESPACE}:${CONTROLLER_NAME}`,
  groups: [
    'system:serviceaccounts',
    `system:serviceaccounts:${CONTROLLER_SERVICE_ACCOUNT_NAMESPACE}`,
    'system:authenticated',
  ],
};

export type AdmissionOperation = Exclude<Operation, 'CONNECT'>;

/** What an admission step may read of the stored objects (a webhook's watched caches). */
export interface AdmissionStore {
  list(kind: Kind, namespace: string): readonly KubeObject[];
}

/**
 * One validating admission step: the violations for this request (empty: admitted), each naming
 * its policy (and binding) or webhook in `by`.
 */
export type AdmissionCheck = (req: AdmissionRequest<KubeObject>, store: AdmissionStore) => Violation[];

/**
 * The error the API server answers with for a step's violations: for a ValidatingAdmissionPolicy
 * its first one; for a webhook every one (as its AdmissionReview response lists them), prefixed as
 * kube-apiserver prefixes a webhook's denial (admission/plugin/webhook/errors ToStatusErr).
 */
export function admissionError(
  req: AdmissionRequest<KubeObject>,
  violations: readonly Violation[],
): ApiError {
  const first = violations[0]!;
  const info = KIND_INFO[req.kind];
  const name = req.name ?? '';
  const by = first.by;
  if (by !== undefined && 'webhook' in by) {
    const own = violations.filter(
      (v) => v.by !== undefined && 'webhook' in v.by && v.by.webhook === by.webhook,
    );
    const message = `admission webhook ${JSON.stringify(by.webhook)} denied the request: ${denialMessage(own, { kind: req.kind, name })}`;
    return new ApiError(first.reason ?? 'Forbidden', message, {
      causes: own.map((v) => ({ field: v.field, message: v.message })),
    });
  }
  const group = info.apiVersion.includes('/') ? info.apiVersion.split('/')[0] : '';
  const resource = group ? `${info.plural}.${group}` : info.plural;
  const policy = by?.policy ?? 'unknown';
  const text = first.field ? `${first.field}: ${first.message}` : first.message;
  const cause = `ValidatingAdmissionPolicy '${policy}' with binding '${by?.binding ?? policy}' denied request: ${text}`;
  return new ApiError(first.reason ?? 'Invalid', `${resource} "${name}" is forbidden: ${cause}`, {
    causes: [{ field: '', message: cause }],
  });
}
