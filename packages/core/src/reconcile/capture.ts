import { isApiError } from '../api/errors.ts';
import type { ObjectKey } from '../api/meta.ts';
import { ClaimSuperseded, recordJob } from '../capture/claim.ts';
import { applyDecision } from './apply.ts';
import { decideCapture, decideStartFailed } from './capture/decide.ts';
import { gatherCapture } from './capture/gather.ts';
import type { CaptureDeps } from './capture/snapshot.ts';
import { event } from './decision.ts';
import { failedResult } from './step.ts';

export * from './capture/decide.ts';
export { gatherCapture, lookupHolder } from './capture/gather.ts';
export * from './capture/snapshot.ts';

export async function reconcileCapture(
  deps: CaptureDeps,
  key: ObjectKey,
): Promise<{ requeueAfterMs?: number }> {
  const snap = await gatherCapture(deps, key);
  if (!snap) return {};
  const d = decideCapture(snap, deps.rules);
  const res = await applyDecision(deps.client, d, deps.recorder);
  if (res.failed) return failedResult(res.failed.error);
  if (d.startJob && deps.backend) {
    const { url, ...req } = d.startJob;
    let id: string;
    try {
      ({ id } = await deps.backend.start(url, req));
    } catch (e) {
      // A failed start is a failed attempt, written fenced on the snapshot's resourceVersion
      // (a Conflict means re-read and decide again).
      const error = String((e as Error)?.message ?? e);
      // Only an answer that says no is definite; anything else (no answer, 429, 5xx) may pass.
      const transient = !isApiError(e) || e.transient;
      const f = decideStartFailed({ ...snap, now: deps.now() }, req.token, error, transient);
      const res = await applyDecision(deps.client, f, deps.recorder);
      if (res.failed) return failedResult(res.failed.error);
      return { requeueAfterMs: f.requeueAfterMs ?? 0 };
    }
    try {
      await deps.client.updateStatus({
        ...snap.capture,
        status: recordJob(snap.capture.status ?? {}, req.token, id, deps.now()),
      });
    } catch (e) {
      if (e instanceof ClaimSuperseded) return { requeueAfterMs: 0 };
      if (isApiError(e, 'Conflict')) return { requeueAfterMs: 0 };
      throw e;
    }
    await deps.recorder?.record(
      event(
        snap.capture,
        'Normal',
        'JobStarted',
        `capture job ${id} started on ${req.pod} with token ${req.token}`,
      ),
    );
  }
  return d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs };
}
