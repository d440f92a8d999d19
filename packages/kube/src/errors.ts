// Maps every failure of a request to the API server onto core's typed ApiError: HTTP statuses with
// their Status bodies, and transport failures (refused, timed out, TLS) with a message naming the
// server, so callers branch on `reason` and users read what went wrong.
import { ApiError, type ApiErrorReason, type FieldCause } from '@claimkit/core';

/** The `metav1.Status` body the API server answers failures with (the fields claimkit reads). */
export interface StatusBody {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
    retryAfterSeconds?: number;
  };
}

/** What was being done, for messages: `PATCH podclaims ns/name`. */
export interface RequestDescription {
  method: string;
  what: string;
  server: string;
}

function parseStatus(body: unknown): StatusBody | undefined {
  if (typeof body === 'string') {
    try {
      return parseStatus(JSON.parse(body));
    } catch {
      return undefined;
    }
  }
  return body && typeof body === 'object' ? (body as StatusBody) : undefined;
}

function retryAfter(header: string | undefined, status: StatusBody | undefined): number | undefined {
  if (header !== undefined && header !== '') {
    const n = Number(header);
    if (Number.isFinite(n) && n >= 0) return n;
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  const d = status?.details?.retryAfterSeconds;
  return typeof d === 'number' && d >= 0 ? d : undefined;
}

function causesOf(status: StatusBody | undefined): FieldCause[] {
  return (status?.details?.causes ?? []).map((c) => ({
    field: c.field ?? '',
    message: c.message ?? c.reason ?? '',
  }));
}

/**
 * An ApiError for an HTTP failure. `body` is the response text or a parsed Status (watch ERROR
 * events carry one); `retryAfterHeader` is the Retry-After header when there was one.
 */
export function httpError(
  code: number,
  body: unknown,
  req?: RequestDescription,
  retryAfterHeader?: string,
): ApiError {
  const status = parseStatus(body);
  const statusCode = typeof status?.code === 'number' && status.code > 0 ? status.code : code;
  let reason: ApiErrorReason;
  switch (true) {
    case statusCode === 400 || statusCode === 405 || statusCode === 406 || statusCode === 415:
      reason = 'BadRequest';
      break;
    case statusCode === 401 || statusCode === 403:
      reason = 'Forbidden';
      break;
    case statusCode === 404:
      reason = 'NotFound';
      break;
    case statusCode === 409:
      reason = status?.reason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
      break;
    case statusCode === 410:
      reason = 'Gone';
      break;
    case statusCode === 422:
      reason = 'Invalid';
      break;
    case statusCode === 429:
      reason = 'TooManyRequests';
      break;
    case statusCode === 504 || status?.reason === 'Timeout' || status?.reason === 'ServerTimeout':
      reason = 'Timeout';
      break;
    case statusCode >= 500:
      reason = 'Unavailable';
      break;
    default:
      reason = 'BadRequest';
  }
  const where = req ? `${req.method} ${req.what}` : '';
  const text = typeof body === 'string' && !status ? body.trim().slice(0, 200) : '';
  const message =
    status?.message ||
    (statusCode === 401
      ? `Unauthorized: the API server at ${req?.server ?? '?'} rejected the credentials`
      : `HTTP ${statusCode}${where ? ` on ${where}` : ''}${text ? `: ${text}` : ''}`);
  const opts: { code: number; causes: FieldCause[]; retryAfterSeconds?: number } = {
    code: statusCode,
    causes: causesOf(status),
  };
  const ra = retryAfter(retryAfterHeader, status);
  if (ra !== undefined) opts.retryAfterSeconds = ra;
  return new ApiError(reason, message, opts);
}

const NETWORK_CODES: Record<string, { reason: ApiErrorReason; text: string }> = {
  ECONNREFUSED: { reason: 'Unavailable', text: 'connection refused' },
  ECONNRESET: { reason: 'Unavailable', text: 'connection reset' },
  EPIPE: { reason: 'Unavailable', text: 'connection closed' },
  ENOTFOUND: { reason: 'Unavailable', text: 'host not found' },
  EAI_AGAIN: { reason: 'Unavailable', text: 'name resolution failed (temporarily)' },
  EHOSTUNREACH: { reason: 'Unavailable', text: 'host unreachable' },
  ENETUNREACH: { reason: 'Unavailable', text: 'network unreachable' },
  ETIMEDOUT: { reason: 'Timeout', text: 'connection timed out' },
  UND_ERR_CONNECT_TIMEOUT: { reason: 'Timeout', text: 'connection timed out' },
  UND_ERR_HEADERS_TIMEOUT: { reason: 'Timeout', text: 'no response headers in time' },
  UND_ERR_BODY_TIMEOUT: { reason: 'Timeout', text: 'response body timed out' },
  UND_ERR_SOCKET: { reason: 'Unavailable', text: 'connection closed by the server' },
  UND_ERR_CLOSED: { reason: 'Unavailable', text: 'connection closed' },
  DEPTH_ZERO_SELF_SIGNED_CERT: { reason: 'Unavailable', text: 'TLS: self-signed certificate' },
  SELF_SIGNED_CERT_IN_CHAIN: { reason: 'Unavailable', text: 'TLS: self-signed certificate in chain' },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { reason: 'Unavailable', text: 'TLS: unknown certificate authority' },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { reason: 'Unavailable', text: 'TLS: unknown certificate authority' },
  CERT_HAS_EXPIRED: { reason: 'Unavailable', text: 'TLS: the server certificate has expired' },
  ERR_TLS_CERT_ALTNAME_INVALID: {
    reason: 'Unavailable',
    text: 'TLS: the server certificate does not match the host name',
  },
};

/** The chain of `cause`s of an error, outermost first. */
function chain(e: unknown): unknown[] {
  const out: unknown[] = [];
  let cur: unknown = e;
  while (cur !== undefined && cur !== null && out.length < 8 && !out.includes(cur)) {
    out.push(cur);
    cur = (cur as { cause?: unknown }).cause;
  }
  return out;
}

function codeOf(e: unknown): string | undefined {
  for (const x of chain(e)) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    // AggregateError (happy eyeballs): the first inner error with a code.
    const errors = (x as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      for (const inner of errors) {
        const c = (inner as { code?: unknown }).code;
        if (typeof c === 'string') return c;
      }
    }
  }
  return undefined;
}

function isTimeout(e: unknown): boolean {
  return chain(e).some((x) => (x as { name?: unknown }).name === 'TimeoutError');
}

/**
 * A readable sentence for a failure to talk to the API server (refused, unreachable, timed out,
 * TLS, auth plugin), naming the server; for anything else, the error's message.
 */
export function explainConnectionError(e: unknown, server?: string): string {
  const at = server ? ` at ${server}` : '';
  if (e instanceof ApiError) return e.message;
  if (isTimeout(e)) return `the API server${at} did not answer in time (request timed out)`;
  const code = codeOf(e);
  const known = code ? NETWORK_CODES[code] : undefined;
  const hint =
    code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH'
      ? ' (is the cluster running, and is this the right kubeconfig/context?)'
      : '';
  if (known) return `cannot reach the API server${at}: ${known.text}${hint}`;
  const inner = chain(e)
    .map((x) => (x instanceof Error ? x.message : String(x)))
    .filter((m) => m && m !== 'fetch failed');
  return `cannot reach the API server${at}: ${inner[0] ?? (code || 'request failed')}`;
}

/** An ApiError for a transport failure (no HTTP status): Timeout or Unavailable, with code 0. */
export function transportError(e: unknown, req?: RequestDescription): ApiError {
  if (e instanceof ApiError) return e;
  const code = codeOf(e);
  const reason: ApiErrorReason = isTimeout(e)
    ? 'Timeout'
    : (code && NETWORK_CODES[code]?.reason) || 'Unavailable';
  const what = req ? ` (${req.method} ${req.what})` : '';
  return new ApiError(reason, `${explainConnectionError(e, req?.server)}${what}`, { code: 0 });
}
