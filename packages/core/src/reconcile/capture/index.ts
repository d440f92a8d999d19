import { getOrUndefined, isApiError } from '../../api/errors.ts';
import type { ObjectKey } from '../../api/meta.ts';
import { keyOf } from '../../api/meta.ts';
import type { Capture } from '../../api/types.ts';
import { beginJobStart, ClaimSuperseded, recordJob } from '../../capture/claim.ts';
import { applyDecision } from '../apply.ts';
import { decideCapture, decideStartFailed } from './decide.ts';
import { gatherCapture } from './gather.ts';
import type { CaptureDecision, CaptureDeps, CaptureSnapshot } from './snapshot.ts';
import { event } from '../decision.ts';
import { failedResult } from '../step.ts';

export * from './decide.ts';
export { gatherCapture, lookupHolder } from './gather.ts';
export * from './snapshot.ts';

export async function reconcileCapture(
  deps: CaptureDeps,
  key: ObjectKey,
): Promise<{ requeueAfterMs?: number }> {
  const snap = await gatherCapture(deps, key);
  if (!snap) return {};
  const d = decideCapture(snap, deps.rules);
  const res = await applyDecision(deps.client, d, deps.recorder);
  if (res.failed) return failedResult(res.failed.error);
  if (d.startJob && deps.backend) return startJob(deps, snap, d.startJob, d.requeueAfterMs);
  return d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs };
}

/**
 * Starts the backend job `decideCapture` asked for: counts the start on the claim first (fenced),
 * calls the backend, then records the job id (fenced). A start counted before but never recorded
 * (a controller stopped mid-start, or a lost answer) is reported as JobRestarted: whatever it made
 * is a spare. A job that finished after its claim moved on is reported as JobSuperseded and never
 * recorded, so its result is never written.
 */
async function startJob(
  deps: CaptureDeps,
  snap: CaptureSnapshot,
  startJob: NonNullable<CaptureDecision['startJob']>,
  requeueAfterMs: number | undefined,
): Promise<{ requeueAfterMs?: number }> {
  const backend = deps.backend!;
  const { url, ...req } = startJob;
  const earlier = snap.capture.status?.claim?.jobStarts ?? 0;
  let current: Capture;
  try {
    current = await deps.client.updateStatus({
      ...snap.capture,
      status: beginJobStart(snap.capture.status ?? {}, req.token, deps.now()),
    });
  } catch (e) {
    if (e instanceof ClaimSuperseded || isApiError(e, 'Conflict')) return { requeueAfterMs: 0 };
    throw e;
  }
  if (earlier > 0) {
    await deps.recorder?.record(
      event(
        current,
        'Warning',
        'JobRestarted',
        `starting the job for token ${req.token} on ${req.pod} again (start ${earlier + 1}): ${earlier} earlier start(s) were never recorded; what they produced, if anything, is a spare and never a result`,
      ),
    );
  }
  let id: string;
  try {
    ({ id } = await backend.start(url, req));
  } catch (e) {
    // A failed start is a failed attempt, written fenced on the resourceVersion of the count
    // (a Conflict means re-read and decide again).
    const error = String((e as Error)?.message ?? e);
    // Only an answer that says no is definite; anything else (no answer, 429, 5xx) may pass.
    const transient = !isApiError(e) || e.transient;
    if (transient)
      await deps.recorder?.record(
        event(
          current,
          'Warning',
          'JobStartFailed',
          `job start on ${req.pod} (token ${req.token}) failed, retrying: ${error}`,
        ),
      );
    const f = decideStartFailed({ ...snap, capture: current, now: deps.now() }, req.token, error, transient);
    const res = await applyDecision(deps.client, f, deps.recorder);
    if (res.failed) return failedResult(res.failed.error);
    return { requeueAfterMs: f.requeueAfterMs ?? 0 };
  }
  try {
    await deps.client.updateStatus({
      ...current,
      status: recordJob(current.status ?? {}, req.token, id, deps.now()),
    });
  } catch (e) {
    if (!(e instanceof ClaimSuperseded) && !isApiError(e, 'Conflict')) throw e;
    const now = await getOrUndefined(deps.client.get('Capture', keyOf(current))).catch(() => undefined);
    const token = now?.status?.claim?.token;
    if (token !== req.token) {
      await deps.recorder?.record(
        event(
          current,
          'Warning',
          'JobSuperseded',
          `job ${id} on ${req.pod} (token ${req.token}) finished after the claim moved on (${
            token ? `now token ${token}` : 'no claim open'
          }); it is not recorded and its result is never written`,
        ),
      );
    }
    return { requeueAfterMs: 0 };
  }
  await deps.recorder?.record(
    event(current, 'Normal', 'JobStarted', `capture job ${id} started on ${req.pod} with token ${req.token}`),
  );
  return requeueAfterMs === undefined ? {} : { requeueAfterMs };
}
