// A level-triggered work queue, after client-go's workqueue: a key is queued at most once however
// often it is added (dirty set), never handed to two workers at once (processing set: an add while
// a worker holds the key re-queues it when the worker calls done), delayed adds keep the earliest
// due time, and failures back off per key (exponential) and overall (token bucket: retry-limiter.ts).
import type { Timers } from '../api/ports.ts';
import { RetryLimiter, type RetryLimiterOptions } from './retry-limiter.ts';

export interface WorkQueueOptions extends Omit<RetryLimiterOptions, 'now'> {
  /** Delayed adds wait on these (the process's real timers, FakeTimers in tests). */
  timers: Timers;
  /** Called whenever the depth changes (for the queue-depth gauge). */
  onDepth?: (depth: number) => void;
  /** client-go's workqueue metrics: adds, time queued, time worked (ms on `timers`). */
  observer?: WorkQueueObserver;
}

export interface WorkQueueObserver {
  /** A key entered the queue (not counted when it was already queued). */
  added?(): void;
  /** A worker took a key that had waited `waitedMs` since it was added. */
  taken?(waitedMs: number): void;
  /** A worker finished a key it held for `workedMs`. */
  finished?(workedMs: number): void;
}

export class WorkQueue {
  private readonly timers: Timers;
  private readonly limiter: RetryLimiter;
  private readonly onDepth: ((depth: number) => void) | undefined;
  private readonly observer: WorkQueueObserver | undefined;
  /** When each queued key was added, and when each key in processing was taken (for the observer). */
  private readonly addedAt = new Map<string, number>();
  /**
   * When each ready key became ready: its add, or the done() that re-queued it. A key added while a
   * worker held it waited for that worker (its own serialization), not for a free one.
   */
  private readonly readyAt = new Map<string, number>();
  private readonly takenAt = new Map<string, number>();

  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly waiting = new Map<string, number>(); // key -> due time
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private timer: unknown;
  private timerDue = Infinity;
  private shutdown = false;
  private drainWaiters: (() => void)[] = [];

  constructor(opts: WorkQueueOptions) {
    const { timers, onDepth, observer, ...limits } = opts;
    this.timers = timers;
    this.limiter = new RetryLimiter({ ...limits, now: () => timers.now() });
    this.onDepth = onDepth;
    this.observer = observer;
  }

  /** Queue a key now (de-duplicated). */
  add(key: string): void {
    if (this.shutdown) return;
    this.waiting.delete(key);
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    // A key re-queued by done() was counted when it was added during processing.
    if (this.observer && !this.addedAt.has(key)) {
      this.observer.added?.();
      this.addedAt.set(key, this.timers.now());
    }
    if (this.processing.has(key)) return; // re-queued by done()
    const getter = this.getters.shift();
    if (getter) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.taken(key);
      getter(key);
      return;
    }
    this.queue.push(key);
    this.readyAt.set(key, this.timers.now());
    this.depthChanged();
  }

  /** Queue a key after ms; an earlier pending due time wins. */
  addAfter(key: string, ms: number): void {
    if (this.shutdown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    if (this.dirty.has(key)) return; // already due now
    const due = this.timers.now() + ms;
    const cur = this.waiting.get(key);
    if (cur !== undefined && cur <= due) return;
    this.waiting.set(key, due);
    this.arm();
  }

  /** Queue a key after its backoff: max(per-key exponential, overall token bucket). */
  addRateLimited(key: string): number {
    const delay = this.when(key);
    this.addAfter(key, delay);
    return delay;
  }

  /** The delay the next rate-limited add of key would get (and counts the failure). */
  when(key: string): number {
    return this.limiter.when(key);
  }

  /**
   * Queue a key after its per-key backoff only (no overall bucket): for "decide again at once"
   * results (a conflict, a step done), so a lagging cache cannot turn into a hot loop; capped low
   * (default 1 s), since such results are expected under contention and are not failures.
   */
  addBackoff(key: string, maxMs?: number): number {
    const delay = this.limiter.backoff(key, maxMs);
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears the key's failure count (after a success). */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /** The next key to work on; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    const key = this.tryGet();
    if (key !== undefined) return Promise.resolve(key);
    if (this.shutdown) return Promise.resolve(undefined);
    return new Promise((r) => this.getters.push(r));
  }

  /** The next ready key now, or undefined when none is ready (a worker that does not wait). */
  tryGet(): string | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    this.dirty.delete(key);
    this.processing.add(key);
    this.taken(key);
    this.depthChanged();
    return key;
  }

  /**
   * How long the next ready key has waited for a worker (ms on `timers`), since it became ready: a
   * key added while a worker held it counts from that worker's done(). 0 when none is ready.
   */
  headWaitMs(): number {
    const key = this.queue[0];
    const at = key === undefined ? undefined : this.readyAt.get(key);
    return at === undefined ? 0 : this.timers.now() - at;
  }

  /** A worker finished key; if it was added meanwhile it goes back in the queue. */
  done(key: string): void {
    const since = this.takenAt.get(key);
    if (since !== undefined) {
      this.takenAt.delete(key);
      this.observer?.finished?.(this.timers.now() - since);
    }
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
    if (this.processing.size === 0) {
      for (const w of this.drainWaiters.splice(0)) w();
    }
  }

  /** Keys ready now (the depth gauge). */
  len(): number {
    return this.queue.length;
  }

  /** Keys waiting for a delayed add. */
  delayed(): number {
    return this.waiting.size;
  }

  inFlight(): number {
    return this.processing.size;
  }

  /** How long each key in processing has been held, in ms (workqueue_unfinished_work_seconds). */
  processingMs(): number[] {
    const now = this.timers.now();
    return [...this.takenAt.values()].map((t) => now - t);
  }

  get shuttingDown(): boolean {
    return this.shutdown;
  }

  /** Stops intake: pending gets return undefined; in-flight keys may still call done. */
  shutDown(): void {
    this.shutdown = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting.clear();
    this.queue.length = 0;
    this.dirty.clear();
    this.addedAt.clear();
    this.readyAt.clear();
    for (const g of this.getters.splice(0)) g(undefined);
    this.depthChanged();
  }

  /** Resolves once no key is being processed. */
  drained(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((r) => this.drainWaiters.push(r));
  }

  private arm(): void {
    let next = Infinity;
    for (const due of this.waiting.values()) if (due < next) next = due;
    if (next === Infinity || next >= this.timerDue) return;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timerDue = next;
    this.timer = this.timers.setTimeout(() => this.fire(), next - this.timers.now());
  }

  private fire(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    const now = this.timers.now();
    const due = [...this.waiting].filter(([, t]) => t <= now).sort((a, b) => a[1] - b[1]);
    for (const [k] of due) {
      this.waiting.delete(k);
      this.add(k);
    }
    this.arm();
  }

  private taken(key: string): void {
    this.readyAt.delete(key);
    if (!this.observer) return;
    const at = this.addedAt.get(key);
    this.addedAt.delete(key);
    const now = this.timers.now();
    this.takenAt.set(key, now);
    this.observer.taken?.(at === undefined ? 0 : now - at);
  }

  private depthChanged(): void {
    this.onDepth?.(this.queue.length);
  }
}
