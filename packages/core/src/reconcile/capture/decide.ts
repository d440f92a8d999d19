// Capture decisions (pure): acquire, take over, renew, poll the backend's job, fenced terminal
// writes, and the flag on a result that lacks the producing claim's token.
import { findCondition } from '../../api/conditions.ts';
import { type EventSpec, event, noop, type Write } from '../../api/decision.ts';
import { parseTimestamp } from '../../api/meta.ts';
import type { Capture, CaptureStatus, Pod } from '../../api/types.ts';
import { captureCandidates } from '../../capture/candidates.ts';
import { claimExpiry, decideAcquire, isClaimLive, isTerminalPhase, renewClaim } from '../../capture/claim.ts';
import { unfencedResult } from '../../capture/result-fence.ts';
import { SAFETY_RULES, type SafetyRules } from '../safety-rules.ts';
import { attemptTimedOut, decideJobStart, decideStartJob, failAttempt } from './job-start.ts';
import type { CaptureDecision, CaptureSnapshot } from './snapshot.ts';
import { CAPTURE_POLL_MS, CONDITION_RESULT_FENCED, REASON_UNFENCED_RESULT } from './snapshot.ts';
import { noopWrites, resultFencedCondition, withObserved, writeStatus } from './status.ts';

/** Decides with core's rules unless a test hands in `rules` with one broken on purpose. */
export function decideCapture(s: CaptureSnapshot, rules: SafetyRules = SAFETY_RULES): CaptureDecision {
  if (s.jobStart) return decideJobStart(s, s.jobStart);
  if (s.capture.metadata.deletionTimestamp) return noop();
  return withResultFence(s.capture, decideClaim(s, rules), s.now);
}

/**
 * A result that got past the fence is flagged, never acted on: the ResultFenced condition goes
 * False (Ready too, if the phase says Captured) with one Warning Event when it does; the result
 * stays for a person to judge (`claimctl doctor --fix` discards it). Once set, nothing is written
 * again until the status changes, so a flagged capture costs no writes.
 */
function withResultFence(c: Capture, d: CaptureDecision, now: number): CaptureDecision {
  const status = c.status ?? {};
  const ownStatus = (w: Write): w is Extract<Write, { op: 'updateStatus' }> =>
    w.op === 'updateStatus' && w.object.kind === 'Capture';
  let writes = d.writes;
  // A job start records its id fenced on the snapshot's resourceVersion: write the condition after.
  if (!writes.some(ownStatus) && !d.startJob) {
    const want = resultFencedCondition(c, status);
    const have = findCondition(status.conditions, CONDITION_RESULT_FENCED);
    const stale =
      want !== undefined &&
      (have?.status !== want.status ||
        have.reason !== want.reason ||
        have.message !== want.message ||
        have.observedGeneration !== want.observedGeneration);
    if (!stale) return d;
    writes = [...writes, ...writeStatus(c, status, [], undefined, now).writes];
  }
  const written = (writes.find(ownStatus)?.object as Capture | undefined)?.status;
  const after = written && findCondition(written.conditions, CONDITION_RESULT_FENCED);
  if (
    after?.status !== 'False' ||
    findCondition(status.conditions, CONDITION_RESULT_FENCED)?.status === 'False'
  ) {
    return { ...d, writes };
  }
  const events = [
    ...d.events,
    event(
      c,
      'Warning',
      REASON_UNFENCED_RESULT,
      `result ${written?.result?.ref ?? ''} is unfenced: ${after.message}`,
    ),
  ];
  return { ...d, writes, events };
}

/**
 * `claimctl doctor --fix` for an unfenced result: remove it so the capture runs again (phase
 * Pending, or Capturing while a claim is open); epoch, claim and attempts are kept, so the next
 * claim gets a token above every one issued. Fenced on the resourceVersion `c` was read at.
 */
export function decideDiscardUnfencedResult(c: Capture, now: number, actor: string): CaptureDecision {
  const status = c.status ?? {};
  const why = unfencedResult(status);
  if (!why || !status.result) return noop();
  const { result, ...rest } = status;
  const message = `${actor} discarded unfenced result ${result.ref} (token ${result.token}): ${why}`;
  const next: CaptureStatus = { ...rest, phase: rest.claim ? 'Capturing' : 'Pending', lastError: message };
  return writeStatus(c, next, [event(c, 'Warning', 'ResultDiscarded', message)], 0, now);
}

function decideClaim(s: CaptureSnapshot, rules: SafetyRules): CaptureDecision {
  const c = s.capture;
  const status = c.status ?? {};
  const now = s.now;
  if (isTerminalPhase(status.phase)) {
    return withObserved(c, status, noopWrites(c, status, now), now);
  }
  const events: EventSpec[] = [];
  const claim = status.claim;
  if (claim) {
    const live = isClaimLive(claim, now);
    const liveness = rules.classifyHolder(claim.holder, s.holder);
    if (!live || liveness.state === 'dead') {
      const reason = !live ? 'LeaseExpired' : (liveness as { reason: string }).reason;
      const exclude = { name: '', uid: claim.holder.uid };
      const next = captureCandidates(c, s.pods, exclude)[0];
      if (next) {
        const out = decideAcquire(c, podRef(next), s.holder, now, rules);
        if (out.kind === 'tookOver') {
          events.push(
            event(
              c,
              'Warning',
              'TakenOver',
              `claim taken over from ${claim.holder.name} (${reason}) by ${next.metadata.name} with token ${out.status.epoch}`,
              { takeover: reason },
            ),
          );
          return writeStatus(c, out.status, events, 0, now);
        }
      }
      // Nobody Ready to take over: close the dead claim so the next Ready pod acquires at once.
      const { claim: _closed, ...rest } = status;
      events.push(
        event(
          c,
          'Warning',
          'HolderLost',
          `claim of ${claim.holder.name} closed (${reason}); no Ready candidate`,
        ),
      );
      return writeStatus(c, { ...rest, phase: 'Pending' }, events, undefined, now);
    }
    // A live claim with a live (or unknown) holder is kept.
    if (c.spec.backend.type === 'External') {
      return withObserved(
        c,
        status,
        { writes: [], events, requeueAfterMs: Math.max(0, claimExpiry(claim) - now) },
        now,
      );
    }
    return decideBackendProgress(s, events, rules);
  }
  const first = captureCandidates(c, s.pods)[0];
  if (!first) {
    if (status.phase !== 'Pending')
      return writeStatus(c, { ...status, phase: 'Pending' }, events, undefined, now);
    return withObserved(c, status, noop(), now);
  }
  if (c.spec.backend.type === 'External') {
    // External holders acquire for themselves (claimctl capture acquire / core's acquireCapture).
    return withObserved(c, status, noop(), now);
  }
  const out = decideAcquire(c, podRef(first), undefined, now, rules);
  if (out.kind !== 'acquired') return noop();
  events.push(
    event(c, 'Normal', 'Acquired', `claim acquired by ${first.metadata.name} with token ${out.status.epoch}`),
  );
  return writeStatus(c, out.status, events, 0, now);
}

function decideBackendProgress(s: CaptureSnapshot, events: EventSpec[], rules: SafetyRules): CaptureDecision {
  const c = s.capture;
  const status = c.status!;
  const claim = status.claim!;
  const now = s.now;
  const holderPod = s.holder && 'found' in s.holder && s.holder.found ? s.holder.pod : undefined;
  if (!claim.job) {
    if (!holderPod) {
      // Liveness unknown (the holder lookup failed): keep the claim, but not past timeoutSeconds
      // from acquisition, so a claim that never gets a job cannot outlive the attempt's budget.
      if (attemptTimedOut(c, parseTimestamp(claim.acquireTime), now)) {
        const liveness = rules.classifyHolder(claim.holder, s.holder);
        const why = `timed out after ${c.spec.timeoutSeconds}s without starting a job (holder ${claim.holder.name}: ${
          'reason' in liveness ? liveness.reason : liveness.state
        })`;
        return failAttempt(c, status, claim.token, why, events, now);
      }
      return { writes: [], events, requeueAfterMs: CAPTURE_POLL_MS };
    }
    // A start that failed without an answer is retried, but not before CAPTURE_POLL_MS: its own
    // count write wakes this reconcile at once.
    const sinceStart = now - (parseTimestamp(claim.jobStartTime) ?? Number.NEGATIVE_INFINITY);
    if (sinceStart < CAPTURE_POLL_MS) {
      return { writes: [], events, requeueAfterMs: CAPTURE_POLL_MS - Math.max(0, sinceStart) };
    }
    if (!s.startsJobs) return { writes: [], events, requeueAfterMs: CAPTURE_POLL_MS };
    return decideStartJob(c, status, claim, holderPod, events, now);
  }
  const timedOut = attemptTimedOut(
    c,
    parseTimestamp(claim.job.startTime) ?? parseTimestamp(claim.acquireTime),
    now,
  );
  const job = s.job;
  if (job && 'state' in job && job.state === 'Succeeded') {
    events.push(
      event(c, 'Normal', 'Captured', `captured ${job.ref} from ${claim.holder.name} (token ${claim.token})`),
    );
    return writeStatus(c, rules.completeClaim(status, claim.token, job.ref, now), events, undefined, now);
  }
  if ((job && 'state' in job && job.state === 'Failed') || timedOut) {
    const why = timedOut ? `timed out after ${c.spec.timeoutSeconds}s` : (job as { error: string }).error;
    return failAttempt(c, status, claim.token, why, events, now);
  }
  // Running, or the poll failed: keep the lease fresh while the job is in flight.
  const renewDue =
    now - (parseTimestamp(claim.renewTime) ?? 0) > Math.min(claim.leaseSeconds * 1000, 60_000) / 3;
  if (renewDue) return writeStatus(c, renewClaim(status, claim.token, now), events, CAPTURE_POLL_MS, now);
  return { writes: [], events, requeueAfterMs: CAPTURE_POLL_MS };
}

function podRef(p: Pod): { name: string; uid: string } {
  return { name: p.metadata.name, uid: p.metadata.uid ?? '' };
}
