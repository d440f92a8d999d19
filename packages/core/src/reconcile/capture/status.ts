// The Capture status write: phase, observedGeneration, and the Ready and ResultFenced conditions.
import { type ConditionSpec, findCondition, setCondition } from '../../api/conditions.ts';
import { type EventSpec, noop, type Write } from '../../api/decision.ts';
import type { Condition } from '../../api/meta.ts';
import type { Capture, CaptureStatus } from '../../api/types.ts';
import { unfencedResult } from '../../capture/result-fence.ts';
import type { CaptureDecision } from './snapshot.ts';
import { CONDITION_RESULT_FENCED, REASON_UNFENCED_RESULT } from './snapshot.ts';

/** ResultFenced: False while the result is unfenced; True once it is not (only if it was ever set). */
export function resultFencedCondition(c: Capture, status: CaptureStatus): ConditionSpec | undefined {
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

export function writeStatus(
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

export function noopWrites(c: Capture, status: CaptureStatus, now: number): CaptureDecision {
  if (status.observedGeneration === (c.metadata.generation ?? 0)) return noop();
  return writeStatus(c, status, [], undefined, now);
}

export function withObserved(
  c: Capture,
  status: CaptureStatus,
  d: CaptureDecision,
  now: number,
): CaptureDecision {
  if (d.writes.length > 0 || status.observedGeneration === (c.metadata.generation ?? 0)) return d;
  return { ...d, writes: writeStatus(c, status, [], undefined, now).writes };
}
