// Workers beyond --concurrency while the queue backs up. A bind holds its worker for three writes in
// sequence, so when the API server's storage slows (a compaction, a slow disk: writes 5-20x slower
// for seconds), 8 workers bind a fraction of the claims arriving and the rest wait in the queue;
// more workers then keep up (the writes are not CPU here, they wait). In calm times keys never wait
// this long and the worker count stays at --concurrency, so the API server sees no more concurrent
// writes from us than before. Added workers take only ready keys and stop once the queue is empty.

/** A ready key that has waited this long means the workers are behind: add one. */
export const SURGE_AFTER_MS = 100;

export interface SurgeState {
  /** Keys ready now, beside the one just taken. */
  ready: number;
  /** How long the next ready key has waited (ms). */
  headWaitMs: number;
  /** Workers running: the --concurrency ones and those added. */
  workers: number;
  /** --max-concurrency (never below --concurrency). */
  maxWorkers: number;
}

/** Whether to add a worker now (checked each time a worker takes a key). */
export function shouldAddWorker(s: SurgeState): boolean {
  return s.ready > 0 && s.headWaitMs >= SURGE_AFTER_MS && s.workers < s.maxWorkers;
}

/** The workers' ceiling: --max-concurrency, or --concurrency when that is higher. */
export function maxWorkers(concurrency: number, maxConcurrency: number): number {
  return Math.max(concurrency, maxConcurrency);
}
