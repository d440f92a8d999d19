// The rules of a Capture (DESIGN.md "Capture", invariants C1 and C2), each with every place that
// enforces or checks it.
import { checker, controller, crdRule, doctor, inCore, type Rule, safetyRule, webhook } from './places.ts';

const CAPTURES = '/validate/captures';

export const CAPTURE_RULES: readonly Rule[] = [
  {
    id: 'C1.epoch',
    invariant: 'C1',
    statement:
      "Capture: the epoch never decreases, and moves only with the claim it issues; a new holder's token equals the new epoch and is above the previous one",
    places: [
      inCore(
        'capture/claim.ts',
        ['decideAcquire', 'const epoch = (status.epoch ?? 0) + 1', 'token: epoch'],
        'every acquisition (`decideAcquire`) issues epoch + 1 as its token',
      ),
      crdRule('Capture', 'epoch never decreases, nor is it removed'),
      crdRule('Capture', 'the epoch changes only with a new claim whose token is the new epoch'),
      crdRule(
        'Capture',
        'a new holder needs a new token: claim.token must equal epoch and be above the previous epoch',
      ),
      crdRule('Capture', 'every token must have been issued: the claim token is above the epoch'),
      webhook(
        CAPTURES,
        '(C1 stated once: `admission/capture-fencing.ts`, in agreement with the CRD rules on every status write of its test)',
      ),
      checker('checkSafety', 'an open claim whose token is not the epoch'),
      checker('InvariantTracker', 'the epoch goes down; a new token is not above the previous epoch'),
    ],
  },
  {
    id: 'C1.result',
    invariant: 'C1',
    statement:
      'Capture: a result only with the token of the claim that produced it, written by the write that closes that claim',
    places: [
      safetyRule('completeClaim'),
      crdRule(
        'Capture',
        'no result without the current claim token: result.token must be the token of the claim this write closes',
      ),
      crdRule('Capture', 'every token must have been issued: the result token is above the epoch'),
      webhook(CAPTURES),
      controller(
        'reconcile/capture/decide.ts',
        ['REASON_UNFENCED_RESULT', 'CONDITION_RESULT_FENCED'],
        'Warning Event `UnfencedResult` + condition `ResultFenced=False`',
      ),
      doctor('CK013', '`--fix` discards the result so the capture runs again'),
      checker('checkFencedResults'),
      checker('checkSafety', 'a result token never issued'),
      checker(
        'InvariantTracker',
        'a result written with another token than that of the claim it closes, or overwritten',
      ),
    ],
  },
  {
    id: 'C2',
    invariant: 'C2',
    statement:
      'Capture: when the holder is dead and a Ready candidate exists, takeover happens on the pod event, not at lease expiry; unknown liveness never causes a takeover',
    places: [
      safetyRule('classifyHolder'),
      controller(
        'reconcile/capture/decide.ts',
        ["'TakenOver'", "'HolderLost'"],
        'takes over at once (Warning Event `TakenOver`), or closes the dead claim while no candidate is Ready (`HolderLost`)',
      ),
      controller(
        'reconcile/capture/sweep.ts',
        ['sweepCaptures'],
        'the sweep takes over dead or expired claims, fenced on the resourceVersion it listed',
      ),
      doctor('CK006'),
      doctor('CK007'),
      checker('checkConvergence', 'a live claim of a dead holder while a Ready candidate exists'),
      checker('InvariantTracker', 'a live claim taken from a holder that was not dead'),
    ],
  },
  {
    id: 'capture-http-url',
    statement: 'Capture: an `Http` backend needs a `url`',
    places: [crdRule('Capture', 'url is required when type is Http')],
  },
];
