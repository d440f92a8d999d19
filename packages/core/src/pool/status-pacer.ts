// How often a pool's status is written when only its counts changed. A busy pool changes its counts on
// every bind (one Idle pod fewer, one Bound more); written each time, the counts cost a status write
// and its watch echo per pool per coalescing window, so a controller's cost per bind grew with the
// number of busy pools (issue 22: 13 pools, 2,642 status writes for 3,600 binds, against 234 with
// one pool). A change to what the status says (a condition's status or reason, the observed
// generation, the template hash, the selector) is written at once; a change of counts alone waits
// until `minIntervalMs` after the pool's last status write from this process, and the pool is
// requeued for it. Process memory, like the pool expectations: a restart writes at once.

/** Counts-only status changes of one pool are written at most this often (per process). */
export const POOL_STATUS_MIN_INTERVAL_MS = 2000;

/** What a pool's decision reads of its pacing (plain data: decide stays pure). */
export interface StatusPacing {
  /** When this process last wrote the pool's status (ms since epoch). */
  lastWriteAt: number;
  minIntervalMs: number;
}

export class PoolStatusPacer {
  private readonly lastWrite = new Map<string, number>();
  readonly minIntervalMs: number;

  constructor(minIntervalMs = POOL_STATUS_MIN_INTERVAL_MS) {
    this.minIntervalMs = minIntervalMs;
  }

  /** The pool's pacing, or undefined when this process has not written its status. */
  pacing(poolUid: string): StatusPacing | undefined {
    const lastWriteAt = this.lastWrite.get(poolUid);
    return lastWriteAt === undefined ? undefined : { lastWriteAt, minIntervalMs: this.minIntervalMs };
  }

  /** The pool's status was written at `now`. */
  wrote(poolUid: string, now: number): void {
    this.lastWrite.set(poolUid, now);
  }
}
