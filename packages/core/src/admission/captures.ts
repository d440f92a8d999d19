// /validate/captures — invariant C1 on every writer, not only the controller (DESIGN.md "Capture"):
// epoch never decreases; a new holder only with a higher token (token > old epoch, token == new epoch);
// no result without the token of the claim that produced it.

import type { AdmissionRequest, Verdict, Violation } from '../api/admission-request.ts';
import { verdict } from '../api/admission-request.ts';
import { field, int, jsonEqual, nonEmpty, obj } from './read.ts';
import { checkSelector } from './selector.ts';

interface ClaimView {
  token: number | undefined;
  holderName: string | undefined;
  holderUid: string | undefined;
}

function claimOf(status: unknown): ClaimView | undefined {
  const c = field(status, 'claim');
  if (c === undefined || c === null) return undefined;
  return {
    token: int(field(c, 'token')),
    holderName: nonEmpty(field(c, 'holder', 'name')),
    holderUid: nonEmpty(field(c, 'holder', 'uid')),
  };
}

function tokenOk(t: number | undefined): t is number {
  return t !== undefined && t >= 1;
}

export function validateCapture(input: AdmissionRequest): Verdict {
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return verdict([]);
  const v: Violation[] = [];
  const warnings: string[] = [];
  const nStatusRaw = field(input.object, 'status');
  if (nStatusRaw !== undefined && nStatusRaw !== null && obj(nStatusRaw) === undefined) {
    return verdict([{ field: 'status', message: 'must be an object' }]);
  }
  // spec.selector names the candidate pods: the empty selector would make every pod in the namespace
  // one. Checked when the spec is written (not on status writes, nor when the selector is unchanged,
  // so that an older object can still be worked on).
  if (input.subResource !== 'status') {
    const sel = field(input.object, 'spec', 'selector');
    if (input.operation === 'CREATE' || !jsonEqual(sel, field(input.oldObject, 'spec', 'selector'))) {
      checkSelector(sel, 'spec.selector', v, 'pod');
    }
  }
  const oStatus = input.operation === 'UPDATE' ? field(input.oldObject, 'status') : undefined;
  const nStatus = nStatusRaw;

  // epoch: a non-negative integer that never decreases.
  const nEpochRaw = field(nStatus, 'epoch');
  const nEpoch = int(nEpochRaw);
  const oEpoch = int(field(oStatus, 'epoch')) ?? 0;
  if (nEpochRaw !== undefined && nEpochRaw !== null && (nEpoch === undefined || nEpoch < 0)) {
    v.push({ field: 'status.epoch', message: 'must be a non-negative integer' });
  } else if ((nEpoch ?? 0) < oEpoch) {
    v.push({
      field: 'status.epoch',
      message: `epoch never decreases: ${oEpoch} -> ${nEpoch ?? 'unset'}`,
    });
  }
  const epoch = nEpoch ?? 0;

  // claim: a new holder (or a new token) is a new acquisition and needs a fresh, higher token.
  const oClaim = claimOf(oStatus);
  const nClaimRaw = field(nStatus, 'claim');
  const nClaim = claimOf(nStatus);
  if (nClaimRaw !== undefined && nClaimRaw !== null && obj(nClaimRaw) === undefined) {
    v.push({ field: 'status.claim', message: 'must be an object' });
  } else if (nClaim !== undefined) {
    if (!tokenOk(nClaim.token)) {
      v.push({ field: 'status.claim.token', message: 'must be a positive integer' });
    }
    if (nClaim.holderName === undefined) {
      v.push({ field: 'status.claim.holder.name', message: 'a claim needs a holder name' });
    }
    if (nClaim.holderUid === undefined) {
      v.push({ field: 'status.claim.holder.uid', message: 'a claim needs a holder uid' });
    }
    if (tokenOk(nClaim.token)) {
      if (nClaim.token > epoch) {
        v.push({
          field: 'status.claim.token',
          message: `token ${nClaim.token} is above the epoch ${epoch}: every token must have been issued`,
        });
      } else {
        newAcquisition(oClaim, nClaim, nClaim.token, oEpoch, epoch, v);
      }
    }
  }

  // result: written only with the token of the claim that produced it (the claim being closed).
  const nResultRaw = field(nStatus, 'result');
  const oResult = field(oStatus, 'result');
  if (nResultRaw !== undefined && nResultRaw !== null) {
    if (obj(nResultRaw) === undefined) {
      v.push({ field: 'status.result', message: 'must be an object' });
    } else if (!jsonEqual(oResult, nResultRaw)) {
      const rToken = int(field(nResultRaw, 'token'));
      const closing = oClaim?.token;
      if (!tokenOk(rToken)) {
        v.push({ field: 'status.result.token', message: 'no result without the current claim token' });
      } else if (closing === undefined) {
        v.push({
          field: 'status.result.token',
          message: `no result without the current claim token: no claim was held (token ${rToken} is stale)`,
        });
      } else if (rToken !== closing) {
        v.push({
          field: 'status.result.token',
          message: `no result without the current claim token: token ${rToken} is stale, the current claim holds ${closing}`,
        });
      } else if (nClaim !== undefined && nClaim.token !== closing) {
        v.push({
          field: 'status.result.token',
          message: `a result for token ${rToken} cannot be written together with a new claim (token ${nClaim.token})`,
        });
      } else if (nClaim !== undefined) {
        // A result next to an open claim is what detection calls unfenced: the fenced complete closes it.
        v.push({
          field: 'status.claim',
          message: `a result for token ${rToken} is written only by the write that closes its claim`,
        });
      }
      if (nonEmpty(field(nResultRaw, 'ref')) === undefined) {
        v.push({ field: 'status.result.ref', message: 'a result needs a ref' });
      }
    }
  } else if (oResult !== undefined && oResult !== null) {
    warnings.push('status.result is removed: the durable capture result is lost');
  }
  if (field(nStatus, 'phase') === 'Captured' && (nResultRaw === undefined || nResultRaw === null)) {
    warnings.push('status.phase is Captured without a status.result');
  }
  return verdict(v, warnings);
}

function newAcquisition(
  oClaim: ClaimView | undefined,
  nClaim: ClaimView,
  token: number,
  oEpoch: number,
  epoch: number,
  v: Violation[],
): void {
  const sameHolder =
    oClaim !== undefined && oClaim.holderName === nClaim.holderName && oClaim.holderUid === nClaim.holderUid;
  const sameToken = oClaim !== undefined && oClaim.token === token;
  if (sameHolder && sameToken) return; // the same claim (renewal, job id, ...)
  if (sameToken) {
    v.push({
      field: 'status.claim.holder',
      message: `a new holder needs a higher token: token ${token} already belongs to ${oClaim?.holderName ?? '?'}`,
    });
  } else if (token <= oEpoch) {
    v.push({
      field: 'status.claim.token',
      message: `a new holder needs a higher token: ${token} is not above the epoch ${oEpoch}`,
    });
  } else if (token !== epoch) {
    v.push({
      field: 'status.claim.token',
      message: `a new claim's token must equal the new epoch (${epoch}), got ${token}`,
    });
  }
}
