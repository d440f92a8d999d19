// What happens to a key after one turn of the loop, as data (XState style): a pure function from the
// turn's outcome to a queue action, and one function that performs an action on any queue with the
// four operations. The controller's WorkQueue and the simulator's replica queues both go through it,
// so "decide again at once", "again in n ms", "done" and "failed" mean the same delays in both.
import type { ReconcileResult } from '../reconcile/step.ts';

/** How one turn of the loop ended for a key. */
export type LoopOutcome =
  | { reconciled: ReconcileResult }
  | { failed: unknown }
  /** Not reconciled: the cache still shows a version this controller replaced (own-writes.ts). */
  | { cacheBehind: { ttlMs: number } };

/**
 * What the queue does next with the key, and the `result` label the turn is counted under.
 * - backoff: decide again "at once", after the key's per-key backoff (0 the first time);
 * - forget: done, its failure count cleared;
 * - forget-then-add-after: done, and again after `ms` (a requeueAfterMs, or the own-writes safety net);
 * - retry-rate-limited: failed, again after max(per-key exponential, overall token bucket).
 */
export type QueueAction =
  | { next: 'backoff'; result: 'requeue' }
  | { next: 'forget'; result: 'success' }
  | { next: 'forget-then-add-after'; ms: number; result: 'success' | 'cache_behind' }
  | { next: 'retry-rate-limited'; result: 'error' };

export function queuePolicy(outcome: LoopOutcome): QueueAction {
  if ('failed' in outcome) return { next: 'retry-rate-limited', result: 'error' };
  if ('cacheBehind' in outcome) {
    // The newer version's watch event enqueues the key; the delayed add is only a safety net.
    return { next: 'forget-then-add-after', ms: outcome.cacheBehind.ttlMs, result: 'cache_behind' };
  }
  const ms = outcome.reconciled.requeueAfterMs;
  if (ms === 0) return { next: 'backoff', result: 'requeue' };
  if (ms === undefined) return { next: 'forget', result: 'success' };
  return { next: 'forget-then-add-after', ms, result: 'success' };
}

/** The queue operations a QueueAction needs (WorkQueue has them; so does the simulator's queue). */
export interface PolicyQueue {
  addAfter(key: string, ms: number): void;
  /** Adds after the key's per-key backoff; returns that delay. */
  addBackoff(key: string): number;
  /** Adds after the key's failure delay; returns that delay. */
  addRateLimited(key: string): number;
  forget(key: string): void;
}

/** Performs `action` for `key` on `queue`; returns the delay the key got (undefined: not queued). */
export function applyQueueAction(queue: PolicyQueue, key: string, action: QueueAction): number | undefined {
  switch (action.next) {
    case 'backoff':
      return queue.addBackoff(key);
    case 'forget':
      queue.forget(key);
      return undefined;
    case 'forget-then-add-after':
      queue.forget(key);
      queue.addAfter(key, action.ms);
      return action.ms;
    case 'retry-rate-limited':
      return queue.addRateLimited(key);
  }
}
