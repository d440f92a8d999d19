// Work the Manager runs on a timer while it leads (controller-runtime's leader-election Runnables):
// the capture recovery sweep, the resync and the doctor gauge. A task re-arms only after its run has
// ended, so two runs of one task never overlap, and stop() leaves nothing armed.
import type { Timers } from '@claimkit/core';

export interface PeriodicTask {
  name: string;
  /** Between the end of one run and the start of the next (0: never runs). */
  intervalMs: number;
  /** Delay before the first run (default intervalMs). */
  firstDelayMs?: number;
  run(): void | Promise<void>;
}

export class Periodic {
  private readonly timers: Timers;
  private readonly task: PeriodicTask;
  private timer: unknown;
  private running = false;

  constructor(timers: Timers, task: PeriodicTask) {
    this.timers = timers;
    this.task = task;
  }

  get name(): string {
    return this.task.name;
  }

  start(): void {
    if (this.task.intervalMs <= 0 || this.running) return;
    this.running = true;
    this.arm(this.task.firstDelayMs ?? this.task.intervalMs);
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = this.timers.setTimeout(async () => {
      this.timer = undefined;
      if (!this.running) return;
      await this.task.run();
      if (this.running) this.arm(this.task.intervalMs);
    }, ms);
  }
}
