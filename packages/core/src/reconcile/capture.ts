// Capture reconciler: gather (plain-data snapshot) -> decide (pure) -> act.

import { type ConditionSpec, findCondition, setCondition } from '../api/conditions.ts';
import { isApiError } from '../api/errors.ts';
import type { Condition } from '../api/meta.ts';
import { keyOf, type ObjectKey, parseTimestamp } from '../api/meta.ts';
import type { Client, Reader } from '../api/ports.ts';
import type { Capture, CaptureStatus, Pod } from '../api/types.ts';
import type { CaptureBackend, CaptureJobRequest, JobState } from '../capture/backend.ts';
import { captureCandidates } from '../capture/candidates.ts';
import {
  ClaimSuperseded,
  claimExpiry,
  completeClaim,
  decideAcquire,
  failClaim,
  isClaimLive,
  isTerminalPhase,
  recordJob,
  renewClaim,
} from '../capture/claim.ts';
import { classifyHolder, type HolderLookup } from '../capture/liveness.ts';
import { unfencedResult } from '../capture/result-fence.ts';
import { applyDecision, type EventRecorder } from './apply.ts';
import { type Decision, type EventSpec, event, noop, type Write } from './decision.ts';
import { failedResult } from './step.ts';

export interface CaptureSnapshot {
  capture: Capture;
  /** Candidate pods in the capture's namespace (from a cache is fine). */
  pods: Pod[];
  /** Live lookup of the current holder; absent when there is no claim. */
  holder?: HolderLookup;
  /** The backend's answer for the recorded job, when there is one. */
  job?: JobState | { error: string };
  now: number;
}

export interface CaptureDecision extends Decision {
  /** Ask the backend to start a job for this token (the runtime records its id with a fenced write). */
  startJob?: CaptureJobRequest & { url: string };
}

/** How often a controller-driven capture renews its lease and polls its job. */
export const CAPTURE_POLL_MS = 2000;

/** The condition that says whether the standing result is fenced (see capture/result-fence.ts). */
export const CONDITION_RESULT_FENCED = 'ResultFenced';
export const REASON_UNFENCED_RESULT = 'UnfencedResult';

export function decideCapture(s: CaptureSnapshot): CaptureDecision {
  if (s.capture.metadata.deletionTimestamp) return noop();
  return withResultFence(s.capture, decideClaim(s), s.now);
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

function decideClaim(s: CaptureSnapshot): CaptureDecision {
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
    const liveness = classifyHolder(claim.holder, s.holder);
    if (!live || liveness.state === 'dead') {
      const reason = !live ? 'LeaseExpired' : (liveness as { reason: string }).reason;
      const exclude = { name: '', uid: claim.holder.uid };
      const next = captureCandidates(c, s.pods, exclude)[0];
      if (next) {
        const out = decideAcquire(c, podRef(next), s.holder, now);
        if (out.kind === 'tookOver') {
          events.push(
            event(
              c,
              'Warning',
              'TakenOver',
              `claim taken over from ${claim.holder.name} (${reason}) by ${next.metadata.name} with token ${out.status.epoch}`,
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
    return decideBackendProgress(s, events);
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
  const out = decideAcquire(c, podRef(first), undefined, now);
  if (out.kind !== 'acquired') return noop();
  events.push(
    event(c, 'Normal', 'Acquired', `claim acquired by ${first.metadata.name} with token ${out.status.epoch}`),
  );
  return writeStatus(c, out.status, events, 0, now);
}

function decideBackendProgress(s: CaptureSnapshot, events: EventSpec[]): CaptureDecision {
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
        const liveness = classifyHolder(claim.holder, s.holder);
        const why = `timed out after ${c.spec.timeoutSeconds}s without starting a job (holder ${claim.holder.name}: ${
          'reason' in liveness ? liveness.reason : liveness.state
        })`;
        return failAttempt(c, status, claim.token, why, events, now);
      }
      return { writes: [], events, requeueAfterMs: CAPTURE_POLL_MS };
    }
    return {
      writes: [],
      events,
      requeueAfterMs: CAPTURE_POLL_MS,
      startJob: { ...jobRequest(c, holderPod, claim.token), url: c.spec.backend.url ?? '' },
    };
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
    return writeStatus(c, completeClaim(status, claim.token, job.ref, now), events, undefined, now);
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
export function decideStartFailed(
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
function attemptTimedOut(c: Capture, sinceMs: number | undefined, now: number): boolean {
  return now - (sinceMs ?? now) > c.spec.timeoutSeconds * 1000;
}

/** One failed attempt: closes the claim (failClaim; Failed after maxAttempts), Warning CaptureFailed. */
function failAttempt(
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
    token,
  };
}

function podRef(p: Pod): { name: string; uid: string } {
  return { name: p.metadata.name, uid: p.metadata.uid ?? '' };
}

/** ResultFenced: False while the result is unfenced; True once it is not (only if it was ever set). */
function resultFencedCondition(c: Capture, status: CaptureStatus): ConditionSpec | undefined {
  const why = unfencedResult(status);
  if (!why && !findCondition(status.conditions, CONDITION_RESULT_FENCED)) return undefined;
  const observedGeneration = c.metadata.generation ?? 0;
  if (why) {
    return {
      type: CONDITION_RESULT_FENCED,
      status: 'False',
      reason: REASON_UNFENCED_RESULT,
      message: why,
      observedGeneration,
    };
  }
  return {
    type: CONDITION_RESULT_FENCED,
    status: 'True',
    reason: 'Fenced',
    message: status.result ? `result token ${status.result.token} is the latest claim's` : 'no result',
    observedGeneration,
  };
}

function conditionsFor(c: Capture, status: CaptureStatus, now: number): Condition[] {
  const phase = status.phase ?? 'Pending';
  const unfenced = phase === 'Captured' ? unfencedResult(status) : undefined;
  const ready: ConditionSpec = {
    type: 'Ready',
    status: phase === 'Captured' && !unfenced ? 'True' : 'False',
    reason: unfenced ? REASON_UNFENCED_RESULT : phase,
    message: unfenced
      ? `result ${status.result?.ref ?? ''} is unfenced: ${unfenced}`
      : phase === 'Captured'
        ? `captured ${status.result?.ref ?? ''}`
        : status.claim
          ? `held by ${status.claim.holder.name} with token ${status.claim.token}`
          : (status.lastError ?? 'waiting for a Ready candidate'),
    observedGeneration: c.metadata.generation ?? 0,
  };
  const fenced = resultFencedCondition(c, status);
  const withReady = setCondition(status.conditions, ready, now);
  return fenced ? setCondition(withReady, fenced, now) : withReady;
}

function writeStatus(
  c: Capture,
  next: CaptureStatus,
  events: EventSpec[],
  requeueAfterMs: number | undefined,
  now: number,
): CaptureDecision {
  const status: CaptureStatus = {
    ...next,
    observedGeneration: c.metadata.generation ?? 0,
    conditions: conditionsFor(c, next, now),
  };
  const w: Write = { op: 'updateStatus', object: { ...c, status }, why: 'capture status' };
  return requeueAfterMs === undefined ? { writes: [w], events } : { writes: [w], events, requeueAfterMs };
}

function noopWrites(c: Capture, status: CaptureStatus, now: number): CaptureDecision {
  if (status.observedGeneration === (c.metadata.generation ?? 0)) return noop();
  return writeStatus(c, status, [], undefined, now);
}

function withObserved(c: Capture, status: CaptureStatus, d: CaptureDecision, now: number): CaptureDecision {
  if (d.writes.length > 0 || status.observedGeneration === (c.metadata.generation ?? 0)) return d;
  return { ...d, writes: writeStatus(c, status, [], undefined, now).writes };
}

// ---------------- gather + act ----------------

export interface CaptureDeps {
  /** Reads that may lag (an informer cache). */
  cache: Reader;
  /** Live reads and all writes. */
  client: Client;
  backend?: CaptureBackend;
  now: () => number;
  recorder?: EventRecorder;
}

export async function gatherCapture(deps: CaptureDeps, key: ObjectKey): Promise<CaptureSnapshot | undefined> {
  let capture: Capture;
  try {
    capture = await deps.cache.get('Capture', key);
  } catch (e) {
    if (isApiError(e, 'NotFound')) return undefined;
    throw e;
  }
  // Candidates by the capture's selector (not the whole namespace), plus the holder by name.
  const pods = (
    await deps.cache.list('Pod', { namespace: key.namespace, labelSelector: capture.spec.selector })
  ).items;
  const holderName = capture.status?.claim?.holder.name;
  if (holderName && !pods.some((p) => p.metadata.name === holderName)) {
    try {
      pods.push(await deps.cache.get('Pod', { namespace: key.namespace, name: holderName }));
    } catch (e) {
      if (!isApiError(e, 'NotFound')) throw e;
    }
  }
  const snap: CaptureSnapshot = { capture, pods, now: deps.now() };
  const claim = capture.status?.claim;
  if (claim) {
    snap.holder = await lookupHolder(deps, key.namespace, claim.holder.name, pods);
    if (claim.job && deps.backend && capture.spec.backend.type !== 'External') {
      const holderPod = 'found' in snap.holder && snap.holder.found ? snap.holder.pod : undefined;
      const req = holderPod
        ? jobRequest(capture, holderPod, claim.token)
        : { ...jobRequest(capture, fakeHolderPod(claim.holder.name, claim.holder.uid), claim.token) };
      try {
        snap.job = await deps.backend.poll(capture.spec.backend.url ?? '', claim.job.id, req);
      } catch (e) {
        snap.job = { error: String((e as Error)?.message ?? e) };
      }
    }
  }
  snap.now = deps.now();
  return snap;
}

function fakeHolderPod(name: string, uid: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, uid }, spec: { containers: [] } };
}

/**
 * The holder's liveness, confirmed by a live read: a cache NotFound is never enough to declare a
 * holder dead (the cache may not have seen it yet); any other error is "unknown" and keeps the claim.
 */
export async function lookupHolder(
  deps: { client: Reader },
  namespace: string,
  name: string,
  cached: Pod[],
): Promise<HolderLookup> {
  // A cached pod that is deleting or replaced is already definite; otherwise read live.
  const fromCache = cached.find((p) => p.metadata.name === name);
  if (fromCache?.metadata.deletionTimestamp) return { found: true, pod: fromCache };
  try {
    const pod = await deps.client.get('Pod', { namespace, name });
    return { found: true, pod };
  } catch (e) {
    if (isApiError(e, 'NotFound')) return { found: false };
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

export async function reconcileCapture(
  deps: CaptureDeps,
  key: ObjectKey,
): Promise<{ requeueAfterMs?: number }> {
  const snap = await gatherCapture(deps, key);
  if (!snap) return {};
  const d = decideCapture(snap);
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

export { keyOf };
