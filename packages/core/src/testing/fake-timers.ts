// Deterministic timers for unit tests: time moves only when the test advances it.
import type { Timers } from '../api/ports.ts';

interface Pending {
  id: number;
  due: number;
  fn: () => void;
}

export class FakeTimers implements Timers {
  private t: number;
  private seq = 0;
  private pending: Pending[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const p = { id: ++this.seq, due: this.t + Math.max(0, ms), fn };
    this.pending.push(p);
    return p.id;
  }

  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((p) => p.id !== handle);
  }

  /** Moves time forward by ms, firing due timers in order (and those they schedule). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const next = this.pending.filter((p) => p.due <= end).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!next) break;
      this.pending = this.pending.filter((p) => p !== next);
      this.t = Math.max(this.t, next.due);
      next.fn();
    }
    this.t = end;
  }

  get size(): number {
    return this.pending.length;
  }
}
