// A simulated controller replica's work queue: a due-time map that the run steps one key at a time
// on the world's manual clock (the real WorkQueue hands keys to waiting workers through timers). What
// it does after a turn comes from core's queue policy (it is a PolicyQueue) and its retry delays from
// core's RetryLimiter, so they are the controller's numbers; like the WorkQueue, a key is queued
// once and an earlier due time wins.
import type { PolicyQueue } from '../loop/queue-policy.ts';
import { RetryLimiter } from '../loop/retry-limiter.ts';

export class ReplicaQueue implements PolicyQueue, Iterable<[string, number]> {
  private readonly due = new Map<string, number>();
  private readonly limiter: RetryLimiter;
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
    this.limiter = new RetryLimiter({ now });
  }

  /** Queues key at `at`; an earlier pending due time wins. */
  addAt(key: string, at: number): void {
    this.due.set(key, Math.min(this.due.get(key) ?? Infinity, at));
  }

  addAfter(key: string, ms: number): void {
    this.addAt(key, this.now() + ms);
  }

  addBackoff(key: string): number {
    const ms = this.limiter.backoff(key);
    this.addAfter(key, ms);
    return ms;
  }

  addRateLimited(key: string): number {
    const ms = this.limiter.when(key);
    this.addAfter(key, ms);
    return ms;
  }

  forget(key: string): void {
    this.limiter.forget(key);
  }

  /** Takes the key due earliest, if one is due by `now` (ties: the one queued first). */
  take(now: number): string | undefined {
    let next: string | undefined;
    let due = Infinity;
    for (const [k, d] of this.due) {
      if (d <= now && d < due) {
        next = k;
        due = d;
      }
    }
    if (next !== undefined) this.due.delete(next);
    return next;
  }

  /** Removes key (it is being reconciled out of order). */
  remove(key: string): void {
    this.due.delete(key);
  }

  /** When key is due (undefined: not queued). */
  dueAt(key: string): number | undefined {
    return this.due.get(key);
  }

  /** The earliest due time (Infinity when empty). */
  nextDue(): number {
    let due = Infinity;
    for (const d of this.due.values()) due = Math.min(due, d);
    return due;
  }

  [Symbol.iterator](): Iterator<[string, number]> {
    return this.due[Symbol.iterator]();
  }
}
