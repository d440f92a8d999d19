// Typed API errors. Every port implementation (in-memory model, client-node adapter) maps its
// failures to these, so algorithms branch on `reason`, never on HTTP details.

export type ApiErrorReason =
  | 'Conflict'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Forbidden'
  | 'Invalid'
  | 'Unavailable'
  | 'Timeout'
  | 'Gone'
  | 'TooManyRequests'
  | 'BadRequest';

const CODES: Record<ApiErrorReason, number> = {
  Conflict: 409,
  NotFound: 404,
  AlreadyExists: 409,
  Forbidden: 403,
  Invalid: 422,
  Unavailable: 503,
  Timeout: 504,
  Gone: 410,
  TooManyRequests: 429,
  BadRequest: 400,
};

export interface FieldCause {
  field: string;
  message: string;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly reason: ApiErrorReason;
  readonly code: number;
  readonly causes: FieldCause[];
  readonly retryAfterSeconds: number | undefined;

  constructor(
    reason: ApiErrorReason,
    message: string,
    opts: { code?: number; causes?: FieldCause[]; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.reason = reason;
    this.code = opts.code ?? CODES[reason];
    this.causes = opts.causes ?? [];
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  /** Errors worth retrying with backoff; the others need the object re-read or are terminal. */
  get transient(): boolean {
    return (
      this.reason === 'Unavailable' ||
      this.reason === 'Timeout' ||
      this.reason === 'TooManyRequests' ||
      this.reason === 'Gone'
    );
  }
}

export function isApiError(e: unknown, reason?: ApiErrorReason): e is ApiError {
  return e instanceof ApiError && (reason === undefined || e.reason === reason);
}

export const isNotFound = (e: unknown): boolean => isApiError(e, 'NotFound');

/** The read's result, or undefined when the object is not found (any other error is thrown). */
export async function getOrUndefined<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (e) {
    if (isApiError(e, 'NotFound')) return undefined;
    throw e;
  }
}
export const isConflict = (e: unknown): boolean => isApiError(e, 'Conflict');
