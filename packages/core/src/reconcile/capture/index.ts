// Capture reconciler: gathered in capture/gather.ts, decided in capture/decide.ts, applied by the
// one reconcile step. Starting a backend job is the decision's follow-up: the start is counted on
// the claim first (a fenced write of the decision), then the backend is called, and its answer is
// decided again (record the job id, fenced on the count's resourceVersion; or a failed start).
import { getOrUndefined, isApiError } from '../../api/errors.ts';
import { keyOf, type ObjectKey } from '../../api/meta.ts';
import type { Capture } from '../../api/types.ts';
import type { ApplyResult } from '../apply.ts';
import { type ReconcileResult, type Reconciler, reconcileStep } from '../step.ts';
import { decideCapture } from './decide.ts';
import { gatherCapture } from './gather.ts';
import type { CaptureDecision, CaptureDeps, CaptureSnapshot } from './snapshot.ts';

export { lookupHolder } from '../../capture/holder-liveness.ts';
export * from './decide.ts';
export { gatherCapture } from './gather.ts';
export { jobRequest } from './job-start.ts';
export * from './snapshot.ts';

async function followUpCapture(
  deps: CaptureDeps,
  s: CaptureSnapshot,
  d: CaptureDecision,
  applied: ApplyResult,
): Promise<CaptureSnapshot | undefined> {
  if (applied.failed) {
    // Recording a started job conflicted: read live whether its claim moved on (JobSuperseded).
    const js = s.jobStart;
    if (!js || !('id' in js) || js.recordConflicted || !isApiError(applied.failed.error, 'Conflict'))
      return undefined;
    const live = await getOrUndefined(deps.client.get('Capture', keyOf(s.capture))).catch(() => undefined);
    return { ...s, jobStart: { ...js, recordConflicted: true, liveToken: live?.status?.claim?.token } };
  }
  if (!d.startJob || !deps.backend) return undefined;
  // The capture as the start's count wrote it: what follows is fenced on its resourceVersion.
  const counted = d.writes.findIndex((w) => w.op === 'updateStatus' && w.object.kind === 'Capture');
  const capture = applied.written?.[counted] as Capture | undefined;
  if (!capture) return undefined;
  const { url, ...req } = d.startJob;
  const at = { token: req.token, pod: req.pod };
  try {
    const { id } = await deps.backend.start(url, req);
    return { ...s, capture, now: deps.now(), jobStart: { ...at, id } };
  } catch (e) {
    const error = String((e as Error)?.message ?? e);
    // Only an answer that says no is definite; anything else (no answer, 429, 5xx) may pass.
    const transient = !isApiError(e) || e.transient;
    return { ...s, capture, now: deps.now(), jobStart: { ...at, error, transient } };
  }
}

export const captureReconciler: Reconciler<CaptureDeps, CaptureSnapshot, CaptureDecision> = {
  gather: gatherCapture,
  decide: decideCapture,
  followUp: followUpCapture,
};

export function reconcileCapture(deps: CaptureDeps, key: ObjectKey): Promise<ReconcileResult> {
  return reconcileStep(captureReconciler, deps, key);
}
