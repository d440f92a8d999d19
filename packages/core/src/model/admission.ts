// Who writes, and the validating admission step of the in-memory API model. Every write carries a
// user (as the API server's authenticator reports it); after schema validation the model asks each
// admission check, as kube-apiserver runs ValidatingAdmissionPolicies and webhooks after the
// object's schema (and CEL) validation. A denial answers as a ValidatingAdmissionPolicy denial
// does on the real server (apiserver/pkg/admission/plugin/policy/validating/dispatcher.go):
// reason Invalid / HTTP 422 unless the validation names another reason (Forbidden: 403), message
// `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding '<binding>'
// denied request: <message>`, and that text as the one cause.
import { CONTROLLER_NAME } from '../api/constants.ts';
import { ApiError } from '../api/errors.ts';
import type { KubeObject } from '../api/meta.ts';
import { KIND_INFO, type Kind } from '../api/types.ts';

export interface UserInfo {
  username: string;
  groups?: string[];
}

/** The namespace the controller's service account lives in (deploy/controller). */
const CONTROLLER_SERVICE_ACCOUNT_NAMESPACE = 'claimkit-system';

/** The controller's identity: what the model's own Client methods write as. */
export const CONTROLLER_USER: UserInfo = {
  username: `system:serviceaccount:${CONTROLLER_SERVICE_ACCOUNT_NAMESPACE}:${CONTROLLER_NAME}`,
  groups: [
    'system:serviceaccounts',
    `system:serviceaccounts:${CONTROLLER_SERVICE_ACCOUNT_NAMESPACE}`,
    'system:authenticated',
  ],
};

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionRequest {
  operation: AdmissionOperation;
  kind: Kind;
  /** 'status' or 'scale' for writes through that subresource. */
  subresource?: 'status' | 'scale';
  namespace: string;
  name: string;
  user: UserInfo;
  /** The object as it would be stored (defaulted, validated); undefined on DELETE. */
  object: KubeObject | undefined;
  /** The stored object before the write; undefined on CREATE. */
  oldObject: KubeObject | undefined;
}

export interface AdmissionDenial {
  /** The ValidatingAdmissionPolicy that denied. */
  policy: string;
  /** Its binding (defaults to the policy's name). */
  binding?: string;
  message: string;
  /** The validation's `reason`; the API server's default is Invalid (422). */
  reason?: 'Invalid' | 'Forbidden';
}

/** One validating admission step: the denials for this request (empty: admitted). */
export type AdmissionCheck = (req: AdmissionRequest) => AdmissionDenial[];

/** The error the API server answers with for the first denial, as for a ValidatingAdmissionPolicy. */
export function admissionError(req: AdmissionRequest, denial: AdmissionDenial): ApiError {
  const info = KIND_INFO[req.kind];
  const group = info.apiVersion.includes('/') ? info.apiVersion.split('/')[0] : '';
  const resource = group ? `${info.plural}.${group}` : info.plural;
  const cause = `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding ?? denial.policy}' denied request: ${denial.message}`;
  return new ApiError(denial.reason ?? 'Invalid', `${resource} "${req.name}" is forbidden: ${cause}`, {
    causes: [{ field: '', message: cause }],
  });
}
