// How long a key waits before it is tried again, after client-go's workqueue rate limiters: per key,
// exponential in its failures (ItemExponentialFailureRateLimiter), and overall, a token bucket
// (BucketRateLimiter), the larger of the two for a failure. The work queue and the simulator's
// replica queues both ask this, so their retry delays are the same numbers.

export interface RetryLimiterOptions {
  /** The clock the token bucket refills by. */
  now: () => number;
  /** Per-key backoff: baseDelayMs * 2^failures, capped at maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Overall rate limit of failure retries: qps with a burst. */
  qps?: number;
  burst?: number;
}

/** The cap of a "decide again at once" backoff (RetryLimiter.backoff). */
export const REQUEUE_BACKOFF_CAP_MS = 1000;

export class RetryLimiter {
  private readonly now: () => number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly qps: number;
  private readonly burst: number;
  private readonly failures = new Map<string, number>();
  private tokens: number;
  private tokensAt: number;

  constructor(opts: RetryLimiterOptions) {
    this.now = opts.now;
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 60_000;
    this.qps = opts.qps ?? 50;
    this.burst = opts.burst ?? 200;
    this.tokens = this.burst;
    this.tokensAt = this.now();
  }

  /** The delay of a failure's retry: max(per-key exponential, overall token bucket); counts the failure. */
  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const item = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(n, 40));
    return Math.max(item, this.reserveToken());
  }

  /**
   * The delay of a "decide again at once" result (a conflict, a step done): the per-key backoff
   * only, no overall bucket, so a lagging cache cannot turn into a hot loop; 0 the first time and
   * capped low, since such results are expected under contention and are not failures.
   */
  backoff(key: string, maxMs = REQUEUE_BACKOFF_CAP_MS): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const cap = Math.min(this.maxDelayMs, maxMs);
    return n === 0 ? 0 : Math.min(cap, this.baseDelayMs * 2 ** Math.min(n - 1, 40));
  }

  /** Clears the key's failure count (after a success). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  private reserveToken(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.tokensAt) * this.qps) / 1000);
    this.tokensAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.qps);
  }
}
