// What the PodClaim reconciler decides from: a plain-data snapshot, and the ports it is gathered with.
import type { Capture, Pod, PodClaim, PodPool } from '../../api/types.ts';
import type { UnservableNodes } from '../../pool/serving.ts';

/** What a live read of the claim's pod found (P2: Lost only on a live answer). */
export type PodLookup = { found: true; pod: Pod } | { found: false };
/** What a live read of a claim found. */
export type ClaimLookup = { found: true; claim: PodClaim } | { found: false };

export interface PodClaimSnapshot {
  claim: PodClaim;
  pool: PodPool | undefined;
  /**
   * The Capture the pool's spec.source names, as the cache shows it: with a fenced result it is
   * part of the pool's template hash, which decides whether a released pod is outdated.
   */
  poolSource?: Capture;
  /** Pods of the claim's pool in its namespace, plus any pod the claim references. */
  pods: Pod[];
  /** Claims in the namespace (for the reference index); a live list when the claim is deleting. */
  claims: PodClaim[];
  /** Live read of spec.podName, present whenever the cache did not show it healthy and ours. */
  liveCurrent?: PodLookup;
  /** Live read of the claim that spec.podName's claimed-by label names, when it is not this claim. */
  labelHolder?: ClaimLookup;
  /**
   * How many older claims of the pool wait for a pod with no bind in flight (waiting-queue.ts): the
   * claim takes the candidate after theirs, or waits. Absent: it picks by its UID's hash.
   */
  turn?: number;
  /** Nodes of the candidate pods that cannot serve (NotReady or cordoned): never bound there. */
  unservable?: UnservableNodes;
  now: number;
}

/** Retry interval when waiting for something outside our control (an Idle pod, a pool). */
export const WAIT_MS = 5000;
