// Each CEL rule of the CRDs: a write it refuses and one it accepts, judged by validateObject with the
// old object as on an update (the same messages the real API server returns; see conformance.ts).
import { describe, expect, it } from 'vitest';
import { clone } from '../api/json.ts';
import type { Capture, CaptureStatus, PodClaim } from '../api/types.ts';
import {
  at,
  capture,
  fullPodClaimSet,
  fullPodPool,
  heldBy,
  podClaim,
  uidFor,
  withBackend,
  withEpoch,
} from '../testing/fixtures.ts';
import { validateObject } from './validate.ts';

const EPOCH = 'Invalid value: epoch never decreases, nor is it removed';
const EPOCH_MOVES = 'Invalid value: the epoch changes only with a new claim whose token is the new epoch';
const NEW_HOLDER =
  'Invalid value: a new holder needs a new token: claim.token must equal epoch and be above the previous epoch';
const RESULT =
  'Invalid value: no result without the current claim token: result.token must be the token of the claim this write closes';
const CLAIM_ISSUED = 'Invalid value: every token must have been issued: the claim token is above the epoch';
const RESULT_ISSUED = 'Invalid value: every token must have been issued: the result token is above the epoch';

const podA = { name: 'pod-a', uid: uidFor('Pod', 'pod-a') };
const podB = { name: 'pod-b', uid: uidFor('Pod', 'pod-b') };

/** A stored Capture with `status`, and a status write of it to `next`. */
function statusWrite(status: CaptureStatus | undefined, next: CaptureStatus | undefined) {
  const old = capture('c');
  if (status) old.status = clone(status);
  const updated: Capture = { ...clone(old) };
  if (next) updated.status = clone(next);
  else delete updated.status;
  return validateObject('Capture', updated, old);
}

const claimOf = (holder: typeof podA, token: number, renewedAt = 0) => ({
  holder,
  token,
  acquireTime: at(0),
  renewTime: at(renewedAt),
  leaseSeconds: 30,
});
const resultOf = (token: number, from = podA) => ({
  ref: 'registry.example/c:1',
  token,
  capturedFrom: from,
  completionTime: at(5),
});

describe('Capture: epoch never decreases', () => {
  const held: CaptureStatus = { phase: 'Capturing', epoch: 5, claim: claimOf(podA, 5) };

  it('refuses a lower epoch and a removed one', () => {
    expect(statusWrite(held, { ...held, epoch: 4 })).toContainEqual({
      field: 'status.epoch',
      message: EPOCH,
    });
    const { epoch: _e, ...noEpoch } = held;
    expect(statusWrite(held, noEpoch)).toContainEqual({ field: 'status.epoch', message: EPOCH });
    expect(statusWrite(held, undefined)).toEqual([{ field: 'status.epoch', message: EPOCH }]);
  });

  it('accepts the same or a higher epoch, and the first one', () => {
    expect(statusWrite(held, { ...held, phase: 'Pending', claim: undefined })).toEqual([]);
    expect(
      statusWrite({ phase: 'Pending', epoch: 5 }, { phase: 'Capturing', epoch: 9, claim: claimOf(podA, 9) }),
    ).toEqual([]);
    expect(statusWrite(undefined, held)).toEqual([]);
  });
});

describe('Capture: the epoch moves only with the claim it issues', () => {
  it('refuses a bare epoch edit (up, with no claim or with the old claim kept)', () => {
    expect(statusWrite({ phase: 'Pending', epoch: 5 }, { phase: 'Pending', epoch: 9 })).toEqual([
      { field: 'status.epoch', message: EPOCH_MOVES },
    ]);
    const open: CaptureStatus = { phase: 'Capturing', epoch: 5, claim: claimOf(podA, 5) };
    expect(statusWrite(open, { ...open, epoch: 6 })).toEqual([
      { field: 'status.epoch', message: EPOCH_MOVES },
    ]);
  });

  it('accepts the same epoch whatever else changes', () => {
    const open: CaptureStatus = { phase: 'Capturing', epoch: 5, claim: claimOf(podA, 5) };
    expect(statusWrite(open, { phase: 'Pending', epoch: 5 })).toEqual([]);
  });
});

describe('Capture: a new holder needs a new token (== epoch, above the previous epoch)', () => {
  const held: CaptureStatus = { phase: 'Capturing', epoch: 5, claim: claimOf(podA, 5) };

  it('refuses a new holder whose token is not the epoch, or not above the previous epoch', () => {
    expect(statusWrite(held, { ...held, epoch: 7, claim: claimOf(podB, 6) })).toEqual([
      { field: 'status.epoch', message: EPOCH_MOVES },
      { field: 'status.claim.token', message: NEW_HOLDER },
    ]);
    // Another holder under the same token, and the same holder under an old token.
    expect(statusWrite(held, { ...held, claim: claimOf(podB, 5) })).toEqual([
      { field: 'status.claim.token', message: NEW_HOLDER },
    ]);
    expect(statusWrite({ epoch: 5 }, { epoch: 5, claim: claimOf(podA, 5) })).toEqual([
      { field: 'status.claim.token', message: NEW_HOLDER },
    ]);
    // A first claim at a token the epoch has not reached.
    expect(statusWrite(undefined, { epoch: 1, claim: claimOf(podA, 2) })).toEqual([
      { field: 'status.epoch', message: EPOCH_MOVES },
      { field: 'status.claim.token', message: NEW_HOLDER },
      { field: 'status.claim.token', message: CLAIM_ISSUED },
    ]);
  });

  it('accepts acquire, takeover (token = epoch + 1), renew and recordJob (the same claim)', () => {
    expect(statusWrite(undefined, { phase: 'Capturing', epoch: 1, claim: claimOf(podA, 1) })).toEqual([]);
    expect(statusWrite(held, { ...held, epoch: 6, claim: claimOf(podB, 6) })).toEqual([]);
    expect(statusWrite(held, { ...held, claim: claimOf(podA, 5, 20) })).toEqual([]);
    const withJob = { ...held, claim: { ...claimOf(podA, 5), job: { id: 'j', startTime: at(1) } } };
    expect(statusWrite(held, withJob)).toEqual([]);
  });
});

describe('Capture: no result without the token of the claim that produced it', () => {
  const held: CaptureStatus = { phase: 'Capturing', epoch: 5, claim: claimOf(podA, 5) };
  const closed: CaptureStatus = { phase: 'Pending', epoch: 5 };

  it("refuses the issue's stale-token result (epoch 5, claim closed, result.token 1)", () => {
    expect(statusWrite(closed, { ...closed, phase: 'Captured', result: resultOf(1) })).toEqual([
      { field: 'status.result.token', message: RESULT },
    ]);
  });

  it('refuses a token other than the held claim, and a result with a claim opened in the same write', () => {
    expect(statusWrite(held, { phase: 'Captured', epoch: 5, result: resultOf(4) })).toEqual([
      { field: 'status.result.token', message: RESULT },
    ]);
    expect(
      statusWrite(closed, { phase: 'Captured', epoch: 6, claim: claimOf(podB, 6), result: resultOf(6) }),
    ).toEqual([{ field: 'status.result.token', message: RESULT }]);
    // The held claim's token, but written together with a takeover: the new holder produced nothing.
    expect(
      statusWrite(held, { phase: 'Captured', epoch: 6, claim: claimOf(podB, 6), result: resultOf(5) }),
    ).toEqual([{ field: 'status.result.token', message: RESULT }]);
    // A changed result under an old token, once the claim is gone.
    const done: CaptureStatus = { phase: 'Captured', epoch: 5, result: resultOf(5) };
    expect(statusWrite(done, { ...done, result: { ...resultOf(5), ref: 'elsewhere' } })).toEqual([
      { field: 'status.result.token', message: RESULT },
    ]);
  });

  it('refuses a result token above the epoch (a token never issued)', () => {
    expect(statusWrite(held, { ...held, result: resultOf(9) })).toEqual([
      { field: 'status.result.token', message: RESULT },
      { field: 'status.result.token', message: RESULT_ISSUED },
    ]);
  });

  it("accepts complete (the claim's token, the claim closed in the same write)", () => {
    expect(statusWrite(held, { phase: 'Captured', epoch: 5, result: resultOf(5) })).toEqual([]);
  });

  it('refuses a result next to a claim that stays open (what detection calls unfenced)', () => {
    expect(statusWrite(held, { ...held, result: resultOf(5) })).toEqual([
      { field: 'status.result.token', message: RESULT },
    ]);
  });

  it('keeps an unchanged result whatever happens next, and lets retry drop it', () => {
    const done: CaptureStatus = { phase: 'Captured', epoch: 5, result: resultOf(5), observedGeneration: 1 };
    expect(statusWrite(done, { ...done, observedGeneration: 2 })).toEqual([]);
    expect(statusWrite(done, { phase: 'Pending', epoch: 5, attempts: 0 })).toEqual([]);
  });
});

describe('Capture: stored state the rules would refuse stays updatable where it is not changed', () => {
  it('a spec or metadata update of a capture whose status breaks every rule passes (status unchanged)', () => {
    const old = capture('legacy');
    old.status = { phase: 'Captured', epoch: 2, claim: claimOf(podA, 7), result: resultOf(9) };
    const next = clone(old);
    next.metadata.labels = { touched: 'yes' };
    next.spec.leaseSeconds = 60;
    expect(validateObject('Capture', next, old)).toEqual([]);
    // Written anew (create), the same status is refused by the non-transition rules.
    expect(validateObject('Capture', old)).toEqual([
      { field: 'status.claim.token', message: CLAIM_ISSUED },
      { field: 'status.result.token', message: RESULT_ISSUED },
    ]);
  });
});

describe('Capture: an Http backend needs a url', () => {
  it('refuses type Http without url, accepts it with one', () => {
    expect(validateObject('Capture', capture('h', withBackend('Http')))).toEqual([
      { field: 'spec.backend.url', message: 'Invalid value: url is required when type is Http' },
    ]);
    expect(validateObject('Capture', capture('h', withBackend('Http', 'http://agent:8750')))).toEqual([]);
  });
});

describe('PodClaim', () => {
  const claim = (spec: Partial<PodClaim['spec']>, status?: PodClaim['status']): PodClaim => {
    const c = podClaim('pc');
    c.spec = { ...c.spec, ...spec };
    if (status) c.status = status;
    return c;
  };
  const bound = (status: PodClaim['status']) => claim({}, status);
  const SAME = { field: 'status.sourcePod', message: 'Invalid value: sourcePod must differ from podName' };
  const LEGACY_SAME = {
    field: 'spec.sourcePod',
    message: 'Invalid value: sourcePod must differ from podName',
  };
  const NOT_WRITTEN = (f: string) => ({
    field: `spec.${f}`,
    message: `Invalid value: spec.${f} is no longer written: the binding is in status (it may only be removed)`,
  });

  it('sourcePod == podName is refused in the binding; different or empty is accepted', () => {
    expect(validateObject('PodClaim', bound({ podName: 'p1', sourcePod: 'p1' }))).toEqual([SAME]);
    expect(
      validateObject('PodClaim', bound({ podName: 'p1', sourcePod: 'p1' }), bound({ podName: 'p1' })),
    ).toEqual([SAME]);
    expect(validateObject('PodClaim', bound({ podName: 'p2', sourcePod: 'p1' }))).toEqual([]);
    expect(validateObject('PodClaim', bound({ podName: '', sourcePod: '' }))).toEqual([]);
    expect(validateObject('PodClaim', bound({ podUID: 'u' }))).toEqual([
      { field: 'status.podUID', message: 'Invalid value: podUID needs podName' },
    ]);
  });

  it("an earlier release's binding in spec is kept or removed, never set or changed", () => {
    const legacy = claim({ podName: 'p1', nodeName: 'n1' });
    // Stored by an earlier release (a create is no transition): accepted, and kept by other writes.
    expect(validateObject('PodClaim', legacy)).toEqual([]);
    const labelled = clone(legacy);
    labelled.metadata.labels = { team: 'a' };
    expect(validateObject('PodClaim', labelled, legacy)).toEqual([]);
    expect(validateObject('PodClaim', claim({}), legacy)).toEqual([]);
    expect(validateObject('PodClaim', claim({ podName: 'p2', nodeName: 'n1' }), legacy)).toEqual([
      NOT_WRITTEN('podName'),
    ]);
    expect(
      validateObject('PodClaim', claim({ podName: 'p1', sourcePod: 'p0', nodeName: 'n1' }), legacy),
    ).toEqual([NOT_WRITTEN('sourcePod')]);
    expect(validateObject('PodClaim', claim({ podName: 'p1' }), claim({}))).toEqual([NOT_WRITTEN('podName')]);
  });

  it('a stored sourcePod == podName: spec edits that keep it pass, clearing sourcePod passes', () => {
    const legacy = claim({ podName: 'p1', sourcePod: 'p1' });
    const relabelled = clone(legacy);
    relabelled.metadata.finalizers = [];
    expect(validateObject('PodClaim', relabelled, legacy)).toEqual([]);
    expect(validateObject('PodClaim', claim({ podName: 'p1', sourcePod: '' }), legacy)).toEqual([]);
    // Changing the spec while keeping the violation is refused.
    expect(
      validateObject('PodClaim', claim({ podName: 'p1', sourcePod: 'p1', nodeName: 'n' }), legacy),
    ).toEqual([LEGACY_SAME, NOT_WRITTEN('nodeName')]);
    // In status the rule is on the status object: a status write that keeps the violation is refused
    // (as the API server ratchets: the object changed), the one that clears sourcePod passes.
    const stored = bound({ podName: 'p1', sourcePod: 'p1' });
    const phase = bound({ podName: 'p1', sourcePod: 'p1', phase: 'Bound' });
    expect(validateObject('PodClaim', phase, stored)).toEqual([SAME]);
    expect(validateObject('PodClaim', bound({ podName: 'p1' }), stored)).toEqual([]);
  });

  it('poolName is immutable', () => {
    expect(validateObject('PodClaim', claim({ poolName: 'other' }), claim({}))).toEqual([
      { field: 'spec.poolName', message: 'Invalid value: "other": poolName is immutable' },
    ]);
    expect(validateObject('PodClaim', claim({ lostPolicy: 'Fail' }), claim({}))).toEqual([]);
  });
});

describe('PodClaimSet and PodPool', () => {
  it("the template's poolName is immutable; replicas are not", () => {
    const set = fullPodClaimSet();
    const moved = clone(set);
    moved.spec.template.spec.poolName = 'other';
    expect(validateObject('PodClaimSet', moved, set)).toEqual([
      { field: 'spec.template.spec.poolName', message: 'Invalid value: "other": poolName is immutable' },
    ]);
    const scaled = clone(set);
    scaled.spec.replicas = 9;
    expect(validateObject('PodClaimSet', scaled, set)).toEqual([]);
  });

  it('a pool keeps minIdle <= maxPods', () => {
    const pool = fullPodPool();
    pool.spec.minIdle = pool.spec.maxPods + 1;
    expect(validateObject('PodPool', pool)).toEqual([
      { field: 'spec.minIdle', message: 'Invalid value: minIdle must not exceed maxPods' },
    ]);
    pool.spec.minIdle = pool.spec.maxPods;
    expect(validateObject('PodPool', pool)).toEqual([]);
  });
});

describe('fixtures that model legitimate states pass', () => {
  it('a held claim at epoch + 1', () => {
    const c = capture('f', withEpoch(3), heldBy(podA));
    expect(c.status?.claim?.token).toBe(4);
    expect(validateObject('Capture', c, capture('f', withEpoch(3)))).toEqual([]);
  });
});
