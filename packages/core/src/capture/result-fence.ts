// Whether a Capture's standing result is one core's fenced terminal write could have produced.
// core writes a result only in `completeClaim`: with the open claim's token, which is the epoch
// (every acquisition sets token = epoch), closing that claim in the same write. After that no claim
// is issued (a Captured capture is closed to acquisition) and `retryCapture` removes the result,
// so a fenced result always stands with no claim open and `result.token == epoch`. Anything else
// got in past the fence (a writer without core, with no webhook or CEL rule to stop it).
import type { CaptureStatus } from '../api/types.ts';

/** Why the result of `status` is unfenced, or undefined when it is fenced (or there is none). */
export function unfencedResult(status: CaptureStatus): string | undefined {
  const result = status.result;
  if (!result) return undefined;
  const epoch = status.epoch ?? 0;
  const token = result.token;
  if (!Number.isInteger(token) || token < 1 || token > epoch) {
    return `result token ${token} was never issued (epoch ${epoch})`;
  }
  if (token < epoch) {
    return `result token ${token} is older than epoch ${epoch}: a later claim was issued, so the result is not the latest claim's`;
  }
  if (status.claim) {
    return `a result stands while the claim of ${status.claim.holder.name} (token ${status.claim.token}) is open; a fenced result closes the claim that produced it`;
  }
  return undefined;
}
