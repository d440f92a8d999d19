// Capture-claim transitions: pure functions from (status, inputs, now) to the next status.
// Every acquisition increments epoch and uses it as the fencing token; terminal writes must
// carry the current token or they are superseded (C1).
import { parseTimestamp, toTimestamp } from '../api/meta.ts';
import type { Capture, CaptureClaim, CaptureStatus, PodRef } from '../api/types.ts';
import { classifyHolder, type HolderLookup, type Liveness } from './holder-liveness.ts';

/** A terminal or renewing write whose claim has moved on (or was closed) is rejected with this. */
export class ClaimSuperseded extends Error {
  override readonly name = 'ClaimSuperseded';
  readonly token: number;
  readonly currentToken: number | undefined;
  constructor(token: number, currentToken: number | undefined, what: string) {
    super(
      `claim superseded: ${what} with token ${token}, but the ${
        currentToken === undefined ? 'claim is closed' : `current token is ${currentToken}`
      }`,
    );
    this.token = token;
    this.currentToken = currentToken;
  }
}

export function claimExpiry(claim: CaptureClaim): number {
  return (parseTimestamp(claim.renewTime) ?? 0) + claim.leaseSeconds * 1000;
}

/** A claim is live while renewTime + leaseSeconds > now. */
export function isClaimLive(claim: CaptureClaim | undefined, now: number): boolean {
  return claim !== undefined && claimExpiry(claim) > now;
}

export function isTerminalPhase(phase: CaptureStatus['phase']): boolean {
  return phase === 'Captured' || phase === 'Failed';
}

export type AcquireOutcome =
  | { kind: 'acquired'; status: CaptureStatus }
  | { kind: 'reentered'; status: CaptureStatus }
  | { kind: 'tookOver'; reason: string; previous: PodRef; status: CaptureStatus }
  | { kind: 'held'; holder: PodRef; liveness: Liveness }
  | { kind: 'closed'; phase: CaptureStatus['phase'] };

/**
 * Decides whether `candidate` may hold the claim now. `holderLookup` is the live lookup of the
 * current holder pod (undefined when there is no check: unknown liveness keeps the claim).
 */
export function decideAcquire(
  capture: Capture,
  candidate: PodRef,
  holderLookup: HolderLookup | undefined,
  now: number,
  rules: { classifyHolder: typeof classifyHolder } = { classifyHolder },
): AcquireOutcome {
  const status = capture.status ?? {};
  if (isTerminalPhase(status.phase)) return { kind: 'closed', phase: status.phase };
  const claim = status.claim;
  if (claim) {
    if (claim.holder.name === candidate.name && claim.holder.uid === candidate.uid) {
      return { kind: 'reentered', status: renewed(status, now) };
    }
    if (!isClaimLive(claim, now)) {
      return {
        kind: 'tookOver',
        reason: 'LeaseExpired',
        previous: claim.holder,
        status: issue(capture, candidate, now, true),
      };
    }
    const liveness = rules.classifyHolder(claim.holder, holderLookup);
    if (liveness.state === 'dead') {
      return {
        kind: 'tookOver',
        reason: liveness.reason,
        previous: claim.holder,
        status: issue(capture, candidate, now, true),
      };
    }
    return { kind: 'held', holder: claim.holder, liveness };
  }
  return { kind: 'acquired', status: issue(capture, candidate, now, false) };
}

function issue(capture: Capture, holder: PodRef, now: number, takeover: boolean): CaptureStatus {
  const status = capture.status ?? {};
  const epoch = (status.epoch ?? 0) + 1;
  const ts = toTimestamp(now);
  const next: CaptureStatus = {
    ...status,
    phase: 'Capturing',
    epoch,
    claim: {
      holder: { name: holder.name, uid: holder.uid },
      token: epoch,
      acquireTime: ts,
      renewTime: ts,
      leaseSeconds: capture.spec.leaseSeconds,
    },
  };
  if (takeover) next.takeovers = (status.takeovers ?? 0) + 1;
  return next;
}

function renewed(status: CaptureStatus, now: number): CaptureStatus {
  return { ...status, claim: { ...status.claim!, renewTime: toTimestamp(now) } };
}

function requireToken(status: CaptureStatus, token: number, what: string): CaptureClaim {
  const claim = status.claim;
  if (!claim || claim.token !== token) throw new ClaimSuperseded(token, claim?.token, what);
  return claim;
}

/** Renews the lease; only the current holder with the current token may. */
export function renewClaim(status: CaptureStatus, token: number, now: number): CaptureStatus {
  requireToken(status, token, 'renew');
  return renewed(status, now);
}

/**
 * Counts a job start about to begin (written before the backend is called, fenced like every claim
 * write), so that a controller that resumes a claim whose start was never recorded knows it.
 */
export function beginJobStart(status: CaptureStatus, token: number, now: number): CaptureStatus {
  const claim = requireToken(status, token, 'begin job start');
  return {
    ...status,
    claim: { ...claim, jobStarts: (claim.jobStarts ?? 0) + 1, jobStartTime: toTimestamp(now) },
  };
}

/** Records the backend job id so a restarted controller resumes polling it. */
export function recordJob(status: CaptureStatus, token: number, jobId: string, now: number): CaptureStatus {
  const claim = requireToken(status, token, 'record job');
  return { ...status, claim: { ...claim, job: { id: jobId, startTime: toTimestamp(now) } } };
}

/** The fenced terminal write of a successful capture: result carries the producing token. */
export function completeClaim(status: CaptureStatus, token: number, ref: string, now: number): CaptureStatus {
  const claim = requireToken(status, token, 'complete');
  const { claim: _closed, lastError: _e, ...rest } = status;
  return {
    ...rest,
    phase: 'Captured',
    result: { ref, token, capturedFrom: { ...claim.holder }, completionTime: toTimestamp(now) },
  };
}

/** A failed attempt closes the claim; after maxAttempts the capture is Failed for good. */
export function failClaim(
  status: CaptureStatus,
  token: number,
  error: string,
  maxAttempts: number,
): CaptureStatus {
  requireToken(status, token, 'fail');
  const attempts = (status.attempts ?? 0) + 1;
  const { claim: _closed, ...rest } = status;
  return { ...rest, attempts, lastError: error, phase: attempts >= maxAttempts ? 'Failed' : 'Pending' };
}

/** The holder gives the claim up without a result (the next candidate acquires with a new token). */
export function releaseClaim(status: CaptureStatus, token: number): CaptureStatus {
  requireToken(status, token, 'release');
  const { claim: _closed, ...rest } = status;
  return { ...rest, phase: 'Pending' };
}

/** Operator action: a Failed capture starts over (attempts reset; epoch keeps growing). */
export function retryCapture(status: CaptureStatus): CaptureStatus {
  const { claim: _c, lastError: _e, result: _r, ...rest } = status;
  return { ...rest, phase: 'Pending', attempts: 0 };
}
