// Events written in the background by a few writers, as client-go's broadcaster writes them (one
// writer per sink behind a queue of 1,000, Events past that dropped): a burst of binds does not spend
// the API server's writes and the client's connections on its Events before its binds. An Event is
// best effort either way; a bind never waits for one.
import type { EventSpec } from '../api/decision.ts';
import type { EventRecorder } from './apply.ts';

/** Event writes in flight at most (client-go: one per sink; a few, so a slow API server does not fill the queue). */
export const EVENT_WRITERS = 4;
/** Events waiting at most; one more is dropped (client-go's maxQueuedEvents). */
export const EVENT_QUEUE_CAPACITY = 1000;

export interface QueuedEventRecorderOptions {
  /** Writes in flight at most (default EVENT_WRITERS). */
  writers?: number;
  /** Events waiting at most (default EVENT_QUEUE_CAPACITY). */
  capacity?: number;
  /** An Event that was not written because `capacity` Events were already waiting. */
  dropped?(e: EventSpec): void;
}

interface Waiting {
  event: EventSpec;
  written: () => void;
}

export class QueuedEventRecorder implements EventRecorder {
  private readonly inner: EventRecorder;
  private readonly writers: number;
  private readonly capacity: number;
  private readonly onDrop: ((e: EventSpec) => void) | undefined;
  private waiting: (Waiting | undefined)[] = [];
  private head = 0;
  private writing = 0;
  private drained: (() => void)[] = [];

  constructor(inner: EventRecorder, opts: QueuedEventRecorderOptions = {}) {
    this.inner = inner;
    this.writers = Math.max(1, opts.writers ?? EVENT_WRITERS);
    this.capacity = Math.max(0, opts.capacity ?? EVENT_QUEUE_CAPACITY);
    this.onDrop = opts.dropped;
  }

  /** Queues `e`; the promise settles when it is written (or failed), at once when it is dropped. Never rejects. */
  record(e: EventSpec): Promise<void> {
    if (this.queued() >= this.capacity && this.writing >= this.writers) {
      try {
        this.onDrop?.(e);
      } catch {
        // counting a drop never throws into a reconcile
      }
      return Promise.resolve();
    }
    return new Promise<void>((written) => {
      this.waiting.push({ event: e, written });
      this.pump();
    });
  }

  /** Events waiting for a writer. */
  queued(): number {
    return this.waiting.length - this.head;
  }

  /** Settles when no Event waits or is being written (graceful shutdown, tests). */
  flush(): Promise<void> {
    if (this.queued() === 0 && this.writing === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private pump(): void {
    while (this.writing < this.writers && this.head < this.waiting.length) {
      const next = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined;
      // Compact once the taken head is most of the array, so a long run does not keep it growing.
      if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
      this.writing++;
      void this.write(next);
    }
  }

  private async write(w: Waiting): Promise<void> {
    try {
      await this.inner.record(w.event);
    } catch {
      // best effort: the inner recorder reports its own failures
    } finally {
      this.writing--;
      w.written();
      this.pump();
      if (this.writing === 0 && this.queued() === 0) {
        for (const resolve of this.drained.splice(0)) resolve();
      }
    }
  }
}
