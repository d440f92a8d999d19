// The Manager's workers: `concurrency` loops that take keys from the queue while the process leads,
// and more while the queue backs up (worker-surge.ts decides when), each handing its key to
// `process`. Pausing (leadership lost) stops taking keys; a worker's key in hand is finished.
import type { WorkQueue } from '@claimkit/core';
import { errorText } from '@claimkit/kube';
import type { Logger } from './log.ts';
import { maxWorkers, shouldAddWorker } from './worker-surge.ts';

export interface WorkersOptions {
  queue: WorkQueue;
  /** One key's turn; the key is marked done after it, whatever it threw. */
  process(key: string): Promise<void>;
  concurrency: number;
  /** The ceiling while the queue backs up (never below concurrency). */
  maxConcurrency: number;
  /** Told the number of running workers whenever it changes. */
  onCount(n: number): void;
  log: Logger;
}

export class Workers {
  private readonly o: WorkersOptions;
  private readonly max: number;
  private readonly base: Promise<void>[] = [];
  /** Workers added while the queue backs up, until it is empty. */
  private readonly added = new Set<Promise<void>>();
  private active = false;
  private stopping = false;
  private gate = openGate();

  constructor(o: WorkersOptions) {
    this.o = o;
    this.max = maxWorkers(o.concurrency, o.maxConcurrency);
  }

  /** The most workers that may run (--max-concurrency, at least --concurrency). */
  get ceiling(): number {
    return this.max;
  }

  /** Starts the base workers (they take keys once resumed). */
  start(): void {
    for (let i = 0; i < this.o.concurrency; i++) this.base.push(this.loop());
    this.o.onCount(this.o.concurrency);
  }

  /** Take keys (leading). */
  resume(): void {
    this.active = true;
    this.gate.open();
  }

  /** Stop taking keys (leadership lost): workers wait for the next resume. */
  pause(): void {
    this.active = false;
    this.gate = openGate();
  }

  /** Stop for good: resolves when every worker has finished its key in hand. */
  stop(): Promise<unknown> {
    this.stopping = true;
    this.gate.open();
    return Promise.all([...this.base, ...this.added]);
  }

  private async loop(): Promise<void> {
    for (;;) {
      while (!this.active && !this.stopping) await this.gate.opened;
      if (this.stopping) return;
      const key = await this.o.queue.get();
      if (key === undefined) return;
      await this.work(key);
    }
  }

  /** One taken key, by any worker: one more worker if the queue is behind, the turn, then done. */
  private async work(key: string): Promise<void> {
    this.addWorkerIfBehind();
    try {
      await this.o.process(key);
    } finally {
      this.o.queue.done(key);
    }
  }

  private addWorkerIfBehind(): void {
    const running = this.base.length + this.added.size;
    const q = this.o.queue;
    if (
      !shouldAddWorker({ ready: q.len(), headWaitMs: q.headWaitMs(), workers: running, maxWorkers: this.max })
    )
      return;
    const added: Promise<void> = this.addedWorker()
      .catch((e: unknown) => this.o.log.error('added worker failed', { error: errorText(e) }))
      .finally(() => {
        this.added.delete(added);
        this.o.onCount(this.base.length + this.added.size);
      });
    this.added.add(added);
    this.o.onCount(running + 1);
  }

  /** A worker that takes only ready keys and stops when none is ready (or leadership is lost). */
  private async addedWorker(): Promise<void> {
    // Starts after the current take has finished (the caller's key is already its worker's).
    await Promise.resolve();
    for (;;) {
      if (!this.active || this.stopping) return;
      const key = this.o.queue.tryGet();
      if (key === undefined) return;
      await this.work(key);
    }
  }
}

function openGate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}
