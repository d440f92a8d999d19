// /validate/captures — invariant C1 on every writer, not only the controller (DESIGN.md "Capture"):
// epoch never decreases; a new holder only with a higher token (token > old epoch, token == new epoch);
// no result without the token of the claim that produced it. C1 itself is stated in
// capture-fencing.ts; this file adds the shape checks of the wire JSON and the spec's selector.

import type { AdmissionRequest, Verdict, Violation } from '../api/admission-request.ts';
import { verdict } from '../api/admission-request.ts';
import { captureFencing, isIssuableToken, readFencing } from './capture-fencing.ts';
import { field, jsonEqual, nonEmpty, obj } from './read.ts';
import { checkSelector } from './selector.ts';

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

  // C1 (capture-fencing.ts), each part reported after the shape checks of its field.
  const nRead = readFencing(nStatus);
  const c1 = captureFencing(readFencing(oStatus), nRead, input.operation === 'UPDATE');

  // epoch: a non-negative integer that never decreases.
  const nEpochRaw = field(nStatus, 'epoch');
  if (nEpochRaw !== undefined && nEpochRaw !== null && (nRead.epoch === undefined || nRead.epoch < 0)) {
    v.push({ field: 'status.epoch', message: 'must be a non-negative integer' });
  } else {
    v.push(...c1.epoch);
  }

  // claim: a new holder (or a new token) is a new acquisition and needs a fresh, higher token.
  const nClaimRaw = field(nStatus, 'claim');
  const nClaim = nRead.claim;
  if (nClaimRaw !== undefined && nClaimRaw !== null && obj(nClaimRaw) === undefined) {
    v.push({ field: 'status.claim', message: 'must be an object' });
  } else if (nClaim !== undefined) {
    if (!isIssuableToken(nClaim.token)) {
      v.push({ field: 'status.claim.token', message: 'must be a positive integer' });
    }
    if (nClaim.holderName === undefined) {
      v.push({ field: 'status.claim.holder.name', message: 'a claim needs a holder name' });
    }
    if (nClaim.holderUid === undefined) {
      v.push({ field: 'status.claim.holder.uid', message: 'a claim needs a holder uid' });
    }
    v.push(...c1.claim);
  }

  // result: written only with the token of the claim that produced it (the claim being closed).
  const nResultRaw = field(nStatus, 'result');
  const oResult = field(oStatus, 'result');
  if (nResultRaw !== undefined && nResultRaw !== null) {
    if (obj(nResultRaw) === undefined) {
      v.push({ field: 'status.result', message: 'must be an object' });
    } else if (!jsonEqual(oResult, nResultRaw)) {
      v.push(...c1.result);
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
