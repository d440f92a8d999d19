// Adapts a leader elector (core's Lease algorithm: @claimkit/kube's LeaderElector in the process,
// `CoreLeaseElector` below on any core Client, e.g. the in-memory model) to the Manager's Elector.
// Leadership is for efficiency only: the reconcilers keep every invariant with two replicas active.
import { type Client, leaseStep, releaseLeaderLease } from '@claimkit/core';
import type { Logger } from './log.ts';
import type { Elector } from './manager.ts';
import { realTimers, type Timers } from './timers.ts';

export interface LeaseElectorOptions {
  client: Client;
  namespace: string;
  name?: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  timers?: Timers;
  log?: Logger;
}

/** The loop around core's `leaseStep`: lead on a successful write, step down after renewDeadline. */
export class LeaseElector implements Elector {
  private readonly o: LeaseElectorOptions;
  private readonly timers: Timers;
  private leading = false;
  private stopped = false;
  private lastRenew = 0;
  private timer: unknown;
  private handlers: { onStartedLeading: () => void; onStoppedLeading: () => void } | undefined;
  private running: Promise<void> | undefined;

  constructor(opts: LeaseElectorOptions) {
    this.o = opts;
    this.timers = opts.timers ?? realTimers;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private get params() {
    return {
      namespace: this.o.namespace,
      name: this.o.name ?? 'claimkit-controller',
      identity: this.o.identity,
      leaseDurationSeconds: Math.ceil((this.o.leaseDurationMs ?? 15_000) / 1000),
    };
  }

  run(handlers: { onStartedLeading: () => void; onStoppedLeading: () => void }): void {
    this.handlers = handlers;
    this.running = this.tick();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const r = await leaseStep(this.o.client, this.params, this.timers.now());
    if (this.stopped) return;
    const now = this.timers.now();
    if (r.outcome === 'leading') {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.o.log?.info('became leader', { lease: `${this.o.namespace}/${this.params.name}` });
        this.handlers?.onStartedLeading();
      }
    } else if (
      this.leading &&
      (r.outcome === 'following' || now - this.lastRenew >= (this.o.renewDeadlineMs ?? 10_000))
    ) {
      this.leading = false;
      this.o.log?.warn('lost leadership', { holder: r.holder });
      this.handlers?.onStoppedLeading();
    }
    this.timer = this.timers.setTimeout(() => {
      this.running = this.tick();
    }, this.o.retryPeriodMs ?? 2000);
  }

  async release(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    await this.running;
    if (!this.leading) return;
    this.leading = false;
    if (await releaseLeaderLease(this.o.client, this.params, this.timers.now()))
      this.o.log?.info('released the Lease', { lease: `${this.o.namespace}/${this.params.name}` });
  }
}
