// AdmissionReview v1 in and out. Parsing never throws: a body that is not an AdmissionReview is a
// `BadRequest` (HTTP 400); an AdmissionReview whose request is unusable is answered with a denial
// (code 400) that echoes the uid; a rule's verdict becomes `allowed`, or a denial (code 403) that
// lists every violation with its field path in status.message and status.details.causes.
import {
  type AdmissionRequest,
  denialMessage,
  field,
  nonEmpty,
  type Operation,
  obj,
  str,
  type UserInfo,
  type Verdict,
} from '@claimkit/core/admission';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: {
    code: number;
    message: string;
    reason?: string;
    details?: { name?: string; group?: string; kind?: string; causes: StatusCause[] };
  };
  warnings?: string[];
}

export interface AdmissionReviewOut {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/** A review's request before a route names its kind (the wire's request.kind is only checked). */
export type ReviewRequest = Omit<AdmissionRequest, 'kind'>;

export type ParsedReview =
  | { ok: true; uid: string; kind: GroupVersionKind | undefined; input: ReviewRequest }
  | { ok: false; badBody: true; message: string }
  | { ok: false; badBody: false; uid: string; message: string };

const OPERATIONS: Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** Parses a request body (already JSON-decoded) into a rule input. */
export function parseReview(body: unknown): ParsedReview {
  if (obj(body) === undefined) return { ok: false, badBody: true, message: 'body must be a JSON object' };
  const kind = field(body, 'kind');
  const apiVersion = field(body, 'apiVersion');
  if (kind !== 'AdmissionReview') {
    return { ok: false, badBody: true, message: `kind must be AdmissionReview, got ${short(kind)}` };
  }
  if (apiVersion !== ADMISSION_API_VERSION) {
    return {
      ok: false,
      badBody: true,
      message: `apiVersion must be ${ADMISSION_API_VERSION}, got ${short(apiVersion)}`,
    };
  }
  const req = field(body, 'request');
  if (obj(req) === undefined) return { ok: false, badBody: true, message: 'request must be an object' };
  const uid = nonEmpty(field(req, 'uid'));
  if (uid === undefined) return { ok: false, badBody: true, message: 'request.uid is required' };
  const op = field(req, 'operation');
  if (typeof op !== 'string' || !(OPERATIONS as string[]).includes(op)) {
    return {
      ok: false,
      badBody: false,
      uid,
      message: `request.operation must be one of ${OPERATIONS.join('|')}`,
    };
  }
  const operation = op as Operation;
  const object = nullToUndefined(field(req, 'object'));
  const oldObject = nullToUndefined(field(req, 'oldObject'));
  if ((operation === 'CREATE' || operation === 'UPDATE') && obj(object) === undefined) {
    return { ok: false, badBody: false, uid, message: `request.object must be an object for ${operation}` };
  }
  if (operation === 'UPDATE' && obj(oldObject) === undefined) {
    return { ok: false, badBody: false, uid, message: 'request.oldObject must be an object for UPDATE' };
  }
  const kindRaw = field(req, 'kind');
  const gvk =
    obj(kindRaw) !== undefined
      ? {
          group: str(field(kindRaw, 'group')) ?? '',
          version: str(field(kindRaw, 'version')) ?? '',
          kind: str(field(kindRaw, 'kind')) ?? '',
        }
      : undefined;
  const input: ReviewRequest = { operation, object, oldObject, userInfo: parseUser(field(req, 'userInfo')) };
  const sub = nonEmpty(field(req, 'subResource'));
  const ns = nonEmpty(field(req, 'namespace'));
  const name = nonEmpty(field(req, 'name'));
  if (sub !== undefined) input.subResource = sub;
  if (ns !== undefined) input.namespace = ns;
  if (name !== undefined) input.name = name;
  return { ok: true, uid, kind: gvk, input };
}

function parseUser(raw: unknown): UserInfo {
  const u: UserInfo = {};
  const username = str(field(raw, 'username'));
  const uid = str(field(raw, 'uid'));
  const groups = field(raw, 'groups');
  if (username !== undefined) u.username = username;
  if (uid !== undefined) u.uid = uid;
  if (Array.isArray(groups)) u.groups = groups.filter((g): g is string => typeof g === 'string');
  return u;
}

function nullToUndefined(v: unknown): unknown {
  return v === null ? undefined : v;
}

function short(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : v === undefined ? 'nothing' : typeof v;
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

export function review(response: AdmissionResponse): AdmissionReviewOut {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

/** A denial for an AdmissionReview whose request cannot be judged (code 400). */
export function badRequestResponse(uid: string, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code: 400, reason: 'BadRequest', message } };
}

export function verdictResponse(
  uid: string,
  v: Verdict,
  target: { kind?: string; group?: string; name?: string },
): AdmissionResponse {
  const warnings = v.warnings.map((w) => (w.length > 500 ? `${w.slice(0, 497)}...` : w));
  if (v.allowed) return warnings.length > 0 ? { uid, allowed: true, warnings } : { uid, allowed: true };
  const message = denialMessage(v.violations, target);
  const details: NonNullable<AdmissionResponse['status']>['details'] = {
    causes: v.violations.map((x) => ({ reason: 'FieldValueInvalid', message: x.message, field: x.field })),
  };
  if (target.kind) details.kind = target.kind;
  if (target.group !== undefined) details.group = target.group;
  if (target.name) details.name = target.name;
  const out: AdmissionResponse = {
    uid,
    allowed: false,
    status: { code: 403, reason: 'Forbidden', message, details },
  };
  if (warnings.length > 0) out.warnings = warnings;
  return out;
}
