// Exactly when a standing result is fenced: the cases of capture/result-fence.ts, and every result
// core's own transitions produce is fenced.
import { describe, expect, test } from 'vitest';
import type { CaptureStatus } from '../api/types.ts';
import { capture, captured, captureStatus, heldBy, T0_MS } from '../testing/fixtures.ts';
import { completeClaim, decideAcquire, failClaim, retryCapture } from './claim.ts';
import { unfencedResult } from './result-fence.ts';

const holder = { name: 'w-0', uid: 'u-0' };
const result = (token: number) => ({
  ref: 'snap://x',
  token,
  capturedFrom: holder,
  completionTime: new Date(T0_MS).toISOString(),
});

describe('unfencedResult', () => {
  test.each<[string, CaptureStatus, RegExp | undefined]>([
    ['no result', { phase: 'Pending', epoch: 3 }, undefined],
    ['the closing token, claim closed', { phase: 'Captured', epoch: 3, result: result(3) }, undefined],
    ['a token below the epoch', { phase: 'Captured', epoch: 5, result: result(1) }, /older than epoch 5/],
    [
      'a token above the epoch',
      { phase: 'Captured', epoch: 2, result: result(3) },
      /never issued \(epoch 2\)/,
    ],
    ['no epoch at all', { phase: 'Captured', result: result(1) }, /never issued \(epoch 0\)/],
    ['token 0', { phase: 'Captured', epoch: 0, result: result(0) }, /never issued/],
    ['a fractional token', { phase: 'Captured', epoch: 2, result: result(1.5) }, /never issued/],
    [
      "the open claim's token, claim still open",
      {
        phase: 'Captured',
        epoch: 4,
        result: result(4),
        claim: { holder, token: 4, acquireTime: '', renewTime: '', leaseSeconds: 60 },
      },
      /while the claim of w-0 \(token 4\) is open/,
    ],
  ])('%s', (_name, status, want) => {
    const why = unfencedResult(status);
    if (want === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(want);
  });

  test("core's own transitions only ever leave a fenced result", () => {
    const c = capture('c', captureStatus({ epoch: 6 }), heldBy(holder));
    const done = completeClaim(c.status!, 7, 'snap://7', T0_MS);
    expect(unfencedResult(done)).toBeUndefined();
    // A Captured capture is closed to acquisition: the epoch cannot move past the result.
    expect(decideAcquire({ ...c, status: done }, { name: 'w-1', uid: 'u-1' }, undefined, T0_MS).kind).toBe(
      'closed',
    );
    // Retry removes the result; a failed attempt keeps no result it did not have.
    expect(retryCapture({ ...done, phase: 'Failed' }).result).toBeUndefined();
    expect(unfencedResult(failClaim(c.status!, 7, 'boom', 3))).toBeUndefined();
    expect(unfencedResult(capture('f', captured('snap://1')).status!)).toBeUndefined();
  });
});
