// Capture job starts (pure): the start counted on the claim before the backend is asked, the
// decision on the backend's answer (record the job, or a failed start), and the failed attempt
// that a refused start, a failed job or a timeout costs.

import { type EventSpec, event, noop, type Write } from '../../api/decision.ts';
import { parseTimestamp } from '../../api/meta.ts';
import type { Capture, CaptureClaim, CaptureStatus, Pod } from '../../api/types.ts';
import type { CaptureJobRequest } from '../../capture/backend.ts';
import { beginJobStart, failClaim, recordJob } from '../../capture/claim.ts';
import type { CaptureDecision, CaptureSnapshot, JobStart } from './snapshot.ts';
import { CAPTURE_POLL_MS } from './snapshot.ts';
import { writeStatus } from './status.ts';

/**
 * Asks for the job start. It is counted on the claim first (fenced like every claim write), so a
 * controller that resumes a claim whose start was never recorded (one stopped mid-start, or a lost
 * answer) knows it and says so: JobRestarted, whatever the earlier starts made is a spare.
 */
export function decideStartJob(
  c: Capture,
  status: CaptureStatus,
  claim: CaptureClaim,
  pod: Pod,
  events: EventSpec[],
  now: number,
): CaptureDecision {
  const req = jobRequest(c, pod, claim.token);
  const earlier = claim.jobStarts ?? 0;
  if (earlier > 0) {
    events.push(
      event(
        c,
        'Warning',
        'JobRestarted',
        `starting the job for token ${req.token} on ${req.pod} again (start ${earlier + 1}): ${earlier} earlier start(s) were never recorded; what they produced, if anything, is a spare and never a result`,
      ),
    );
  }
  const count: Write = {
    op: 'updateStatus',
    object: { ...c, status: beginJobStart(status, claim.token, now) },
    why: 'count the job start',
  };
  return {
    writes: [count],
    events,
    requeueAfterMs: CAPTURE_POLL_MS,
    startJob: { ...req, url: c.spec.backend.url ?? '' },
  };
}

/**
 * What follows a job start (`JobStart`), decided on the capture its count wrote:
 * - started: record the job id, fenced on that resourceVersion (JobStarted);
 * - not started: `decideStartFailed`, with a JobStartFailed warning when it is retried;
 * - recording conflicted: a job that finished after its claim moved on is reported (JobSuperseded)
 *   and never recorded, so its result is never written; either way the reconcile re-reads.
 */
export function decideJobStart(s: CaptureSnapshot, js: JobStart): CaptureDecision {
  const c = s.capture;
  if ('error' in js) {
    const failed = decideStartFailed(s, js.token, js.error, js.transient);
    const retrying = js.transient
      ? [
          event(
            c,
            'Warning',
            'JobStartFailed',
            `job start on ${js.pod} (token ${js.token}) failed, retrying: ${js.error}`,
          ),
        ]
      : [];
    return { ...failed, events: [...retrying, ...failed.events], requeueAfterMs: failed.requeueAfterMs ?? 0 };
  }
  if (js.recordConflicted) {
    const token = js.liveToken;
    if (token === js.token) return noop(0);
    const message = `job ${js.id} on ${js.pod} (token ${js.token}) finished after the claim moved on (${
      token ? `now token ${token}` : 'no claim open'
    }); it is not recorded and its result is never written`;
    return { writes: [], events: [event(c, 'Warning', 'JobSuperseded', message)], requeueAfterMs: 0 };
  }
  const status = c.status ?? {};
  // The count just wrote this token; anything else is not ours to record: re-read.
  if (status.claim?.token !== js.token) return noop(0);
  return {
    writes: [
      {
        op: 'updateStatus',
        object: { ...c, status: recordJob(status, js.token, js.id, s.now) },
        why: 'record the job',
      },
    ],
    events: [
      event(c, 'Normal', 'JobStarted', `capture job ${js.id} started on ${js.pod} with token ${js.token}`),
    ],
    requeueAfterMs: CAPTURE_POLL_MS,
  };
}

/**
 * The backend did not start the job asked for by `decideCapture` (`startJob`, with `token`).
 * - A definite refusal (4xx: bad request, forbidden, a stale token) is one failed attempt at once,
 *   like a job the backend reports Failed.
 * - A transient error (the agent or the node proxy unreachable, a timeout, 429, 5xx) is retried
 *   every CAPTURE_POLL_MS without spending an attempt, so that restarting an agent does not use
 *   up maxAttempts in seconds, but only until timeoutSeconds from acquisition: then it is one failed
 *   attempt too. A start whose answer was lost may have run: the next attempt has a higher token,
 *   the agent fences on it, and the unrecorded job's result is never written.
 * `s` is the snapshot the start was decided from (its resourceVersion fences the write).
 */
function decideStartFailed(
  s: CaptureSnapshot,
  token: number,
  error: string,
  transient: boolean,
): CaptureDecision {
  const c = s.capture;
  const status = c.status ?? {};
  const claim = status.claim;
  // The claim moved on (or was closed) in this very snapshot: nothing of ours to fail; re-read.
  if (claim?.token !== token) return { writes: [], events: [], requeueAfterMs: 0 };
  if (transient) {
    if (!attemptTimedOut(c, parseTimestamp(claim.acquireTime), s.now)) {
      return { writes: [], events: [], requeueAfterMs: CAPTURE_POLL_MS };
    }
    return failAttempt(
      c,
      status,
      token,
      `job start failed for ${c.spec.timeoutSeconds}s: ${error}`,
      [],
      s.now,
    );
  }
  return failAttempt(c, status, token, `job start failed: ${error}`, [], s.now);
}

/** Whether an attempt that began at `sinceMs` (unknown: now) is past timeoutSeconds. */
export function attemptTimedOut(c: Capture, sinceMs: number | undefined, now: number): boolean {
  return now - (sinceMs ?? now) > c.spec.timeoutSeconds * 1000;
}

/** One failed attempt: closes the claim (failClaim; Failed after maxAttempts), Warning CaptureFailed. */
export function failAttempt(
  c: Capture,
  status: CaptureStatus,
  token: number,
  why: string,
  events: EventSpec[],
  now: number,
): CaptureDecision {
  const next = failClaim(status, token, why, c.spec.maxAttempts);
  events.push(event(c, 'Warning', 'CaptureFailed', `attempt ${next.attempts} failed: ${why}`));
  return writeStatus(c, next, events, 0, now);
}

export function jobRequest(c: Capture, pod: Pod, token: number): CaptureJobRequest {
  return {
    namespace: c.metadata.namespace ?? '',
    capture: c.metadata.name,
    pod: pod.metadata.name,
    uid: pod.metadata.uid ?? '',
    container: c.spec.container ?? pod.spec.containers[0]?.name ?? '',
    node: pod.spec.nodeName ?? '',
    ...(typeof pod.status?.hostIP === 'string' && pod.status.hostIP ? { nodeIP: pod.status.hostIP } : {}),
    token,
  };
}
