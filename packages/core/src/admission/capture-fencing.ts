// Invariant C1 at the Capture, stated once in TypeScript: the epoch never decreases nor is removed,
// and moves only with the claim it issues; a new holder (or
// a new token) needs token == the new epoch, above the previous epoch; every claim token was issued
// (<= epoch); a new or changed result carries the token of the claim this write closes. The
// webhook's /validate/captures rule reads it from here (captures.ts adds the shape checks); the
// Capture CRD says it in CEL (schema/capture.ts), and capture-fencing.test.ts evaluates both on
// every status write of a case table and names the cases where they differ.

import type { Violation } from '../api/admission-request.ts';
import { field, int, jsonEqual, nonEmpty } from './read.ts';

/** status.claim as C1 reads it; a field that is absent or of the wrong type is undefined. */
export interface FencingClaim {
  token: number | undefined;
  holderName: string | undefined;
  holderUid: string | undefined;
}

/** What C1 reads of a Capture's status (wire JSON or a typed status alike). */
export interface FencingReading {
  /** status.epoch when it is an integer. */
  epoch: number | undefined;
  /** status.claim when present (not null). */
  claim: FencingClaim | undefined;
  /** status.result when present (not null): its token when an integer, and the value compared whole. */
  result: { token: number | undefined; value: unknown } | undefined;
}

/** C1's violations by the status field they concern, so a caller can report each beside its shape checks. */
export interface FencingViolations {
  epoch: Violation[];
  claim: Violation[];
  result: Violation[];
}

const present = (v: unknown): boolean => v !== undefined && v !== null;

export function readFencing(status: unknown): FencingReading {
  const claim = field(status, 'claim');
  const result = field(status, 'result');
  return {
    epoch: int(field(status, 'epoch')),
    claim: present(claim)
      ? {
          token: int(field(claim, 'token')),
          holderName: nonEmpty(field(claim, 'holder', 'name')),
          holderUid: nonEmpty(field(claim, 'holder', 'uid')),
        }
      : undefined,
    result: present(result) ? { token: int(field(result, 'token')), value: result } : undefined,
  };
}

export const isIssuableToken = (t: number | undefined): t is number => t !== undefined && t >= 1;

/**
 * C1 for a write from `old` (the empty reading on create, or when there was no status) to `next`.
 * `update` false (a create): the rules on how the epoch may move are transition rules, which the
 * CRD's CEL does not apply to a create either (the API server drops a created object's status anyway).
 */
export function captureFencing(old: FencingReading, next: FencingReading, update = true): FencingViolations {
  const oldEpoch = old.epoch ?? 0;
  const epoch = next.epoch ?? 0;
  const out: FencingViolations = { epoch: [], claim: [], result: [] };
  if (epoch < oldEpoch || (old.epoch !== undefined && next.epoch === undefined)) {
    out.epoch.push({
      field: 'status.epoch',
      message: `epoch never decreases, nor is it removed: ${oldEpoch} -> ${next.epoch ?? 'unset'}`,
    });
  } else if (update && epoch > oldEpoch && next.claim?.token !== epoch) {
    // DESIGN: the epoch moves only with the claim it issues (as the CRD's CEL says).
    out.epoch.push({
      field: 'status.epoch',
      message: `the epoch moves only with the claim it issues: ${oldEpoch} -> ${epoch} without a claim holding token ${epoch}`,
    });
  }
  const token = next.claim?.token;
  if (next.claim !== undefined && isIssuableToken(token)) {
    if (token > epoch) {
      out.claim.push({
        field: 'status.claim.token',
        message: `token ${token} is above the epoch ${epoch}: every token must have been issued`,
      });
    } else {
      out.claim.push(...newHolderViolations(old.claim, next.claim, token, oldEpoch, epoch));
    }
  }
  if (next.result !== undefined && !jsonEqual(old.result?.value, next.result.value)) {
    out.result.push(...resultViolations(old.claim?.token, next.claim, next.result.token));
  }
  return out;
}

/** Every acquisition issues a fresh, higher token: the same claim (holder and token) is no acquisition. */
function newHolderViolations(
  oldClaim: FencingClaim | undefined,
  claim: FencingClaim,
  token: number,
  oldEpoch: number,
  epoch: number,
): Violation[] {
  const sameHolder =
    oldClaim !== undefined &&
    oldClaim.holderName === claim.holderName &&
    oldClaim.holderUid === claim.holderUid;
  const sameToken = oldClaim !== undefined && oldClaim.token === token;
  if (sameHolder && sameToken) return []; // the same claim (renewal, job id, ...)
  if (sameToken) {
    return [
      {
        field: 'status.claim.holder',
        message: `a new holder needs a higher token: token ${token} already belongs to ${oldClaim?.holderName ?? '?'}`,
      },
    ];
  }
  if (token <= oldEpoch) {
    return [
      {
        field: 'status.claim.token',
        message: `a new holder needs a higher token: ${token} is not above the epoch ${oldEpoch}`,
      },
    ];
  }
  if (token !== epoch) {
    return [
      {
        field: 'status.claim.token',
        message: `a new claim's token must equal the new epoch (${epoch}), got ${token}`,
      },
    ];
  }
  return [];
}

/** A new or changed result: written only with the token of the claim being closed, by the write that closes it. */
function resultViolations(
  closing: number | undefined,
  claim: FencingClaim | undefined,
  token: number | undefined,
): Violation[] {
  const f = 'status.result.token';
  if (!isIssuableToken(token)) return [{ field: f, message: 'no result without the current claim token' }];
  if (closing === undefined) {
    return [
      {
        field: f,
        message: `no result without the current claim token: no claim was held (token ${token} is stale)`,
      },
    ];
  }
  if (token !== closing) {
    return [
      {
        field: f,
        message: `no result without the current claim token: token ${token} is stale, the current claim holds ${closing}`,
      },
    ];
  }
  if (claim !== undefined && claim.token !== closing) {
    return [
      {
        field: f,
        message: `a result for token ${token} cannot be written together with a new claim (token ${claim.token})`,
      },
    ];
  }
  if (claim !== undefined) {
    // A result next to an open claim is what detection calls unfenced: the fenced complete closes it.
    return [
      {
        field: 'status.claim',
        message: `a result for token ${token} is written only by the write that closes its claim`,
      },
    ];
  }
  return [];
}
