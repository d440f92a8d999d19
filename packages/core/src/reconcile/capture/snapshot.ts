import type { Client, Reader } from '../../api/ports.ts';
import type { Capture, Pod } from '../../api/types.ts';
import type { CaptureBackend, CaptureJobRequest, JobState } from '../../capture/backend.ts';
import type { HolderLookup } from '../../capture/holder-liveness.ts';
import type { EventRecorder } from '../apply.ts';
import type { Decision } from '../decision.ts';
import type { SafetyRules } from '../safety-rules.ts';

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
