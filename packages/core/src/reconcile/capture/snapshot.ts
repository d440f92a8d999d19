import type { Decision } from '../../api/decision.ts';
import type { Client, Reader } from '../../api/ports.ts';
import type { Capture, Pod } from '../../api/types.ts';
import type { CaptureBackend, CaptureJobRequest, JobState } from '../../capture/backend.ts';
import type { HolderLookup } from '../../capture/holder-liveness.ts';
import type { EventRecorder } from '../apply.ts';
import type { SafetyRules } from '../safety-rules.ts';

export interface CaptureSnapshot {
  capture: Capture;
  /** Candidate pods in the capture's namespace (from a cache is fine). */
  pods: Pod[];
  /** Live lookup of the current holder; absent when there is no claim. */
  holder?: HolderLookup;
  /** The backend's answer for the recorded job, when there is one. */
  job?: JobState | { error: string };
  /** A backend is there to start jobs with (without one no start is counted or asked for). */
  startsJobs?: boolean;
  /** The job start under way in this reconcile: what the backend answered (see `JobStart`). */
  jobStart?: JobStart;
  now: number;
}

/**
 * The outcome of a job start, fed back to `decideCapture` by the reconcile's follow-up step. The
 * snapshot's capture is then the one the start's count wrote (its resourceVersion fences what follows).
 */
export type JobStart = { token: number; pod: string } /** The backend started job `id`: record it. */ & (
  | { id: string; recordConflicted?: undefined }
  /** The backend did not start it; only a definite answer (4xx) is not `transient`. */
  | { error: string; transient: boolean }
  /** Recording job `id` conflicted; a live read shows the claim's token now (undefined: none, or no answer). */
  | { id: string; recordConflicted: true; liveToken: number | undefined }
);

export interface CaptureDecision extends Decision {
  /**
   * Ask the backend to start a job for this token, once the decision's write (the start counted on
   * the claim, fenced) has landed; the outcome is decided again (`JobStart`).
   */
  startJob?: CaptureJobRequest & { url: string };
}

/** How often a controller-driven capture renews its lease and polls its job. */
export const CAPTURE_POLL_MS = 2000;

/** The condition that says whether the standing result is fenced (see capture/result-fence.ts). */
export const CONDITION_RESULT_FENCED = 'ResultFenced';
export const REASON_UNFENCED_RESULT = 'UnfencedResult';

export interface CaptureDeps {
  /** Reads that may lag (an informer cache). */
  cache: Reader;
  /** Live reads and all writes. */
  client: Client;
  backend?: CaptureBackend;
  now: () => number;
  recorder?: EventRecorder;
  /** The rules decisions apply (default SAFETY_RULES; a test may break one on purpose). */
  rules?: SafetyRules;
}
