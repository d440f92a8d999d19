// Lease-based leader election: the loop around core's `leaseStep` (the decision lives in core).
// Leading starts when a round writes the lease; it stops when another holder is seen, when renewals
// have failed for longer than the renew deadline, or on stop() (which releases the lease so a
// successor need not wait for expiry). Leadership is for efficiency, never for safety. The
// controller's Manager campaigns with it directly (its `elector` option), over any core Client.
import {
  type Client,
  type LeaderLeaseParams,
  type LeaseStepResult,
  type Logger,
  leaseStep,
  releaseLeaderLease,
} from '@claimkit/core';
import { errorText } from './informer.ts';

/** Called when this elector starts and stops leading. */
export interface LeadershipHandlers {
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

export interface LeaderElectorOptions {
  namespace: string;
  name: string;
  identity: string;
  /** Default 15. */
  leaseDurationSeconds?: number;
  /** Give up leading after failing to renew for this long. Default 10 (must be < lease duration). */
  renewDeadlineSeconds?: number;
  /** Time between rounds. Default 2. */
  retryPeriodSeconds?: number;
  clock?: { now(): number };
  /** For tests: how to wait between rounds. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  onStartedLeading?(): void;
  onStoppedLeading?(): void;
  /** The observed holder changed (also our own identity). */
  onNewLeader?(identity: string): void;
  onError?(e: unknown): void;
  /** Logs leadership changes (info), losing the lead and failed rounds (warn). */
  log?: Logger;
}

const defaultSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

export class LeaderElector {
  private readonly client: Client;
  private readonly opts: LeaderElectorOptions;
  private readonly params: LeaderLeaseParams;
  private leading = false;
  private lastRenew = 0;
  private observed: string | undefined;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private handlers: LeadershipHandlers | undefined;

  constructor(client: Client, opts: LeaderElectorOptions) {
    this.client = client;
    this.opts = opts;
    this.params = {
      namespace: opts.namespace,
      name: opts.name,
      identity: opts.identity,
      leaseDurationSeconds: opts.leaseDurationSeconds ?? 15,
    };
    const renew = opts.renewDeadlineSeconds ?? 10;
    if (renew >= this.params.leaseDurationSeconds) {
      throw new Error('LeaderElector: renewDeadlineSeconds must be smaller than leaseDurationSeconds');
    }
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder seen in the last round (undefined when none or unknown). */
  get leader(): string | undefined {
    return this.observed;
  }

  /** Campaigns until stop(); `handlers` hear leadership changes besides the options' callbacks. */
  start(handlers?: LeadershipHandlers): void {
    if (handlers) this.handlers = handlers;
    if (!this.running && !this.abort.signal.aborted) this.running = this.run();
  }

  /** Stops the loop; a leader releases the lease and gets onStoppedLeading. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    if (this.leading) {
      await releaseLeaderLease(this.client, this.params, this.now());
      this.setLeading(false);
    }
  }

  private now(): number {
    return this.opts.clock?.now() ?? Date.now();
  }

  private safe(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.failed(e);
    }
  }

  private failed(e: unknown): void {
    this.opts.log?.warn('leader election', { lease: this.lease, error: errorText(e) });
    try {
      this.opts.onError?.(e);
    } catch {
      // the caller's handler
    }
  }

  private get lease(): string {
    return `${this.params.namespace}/${this.params.name}`;
  }

  private setLeading(v: boolean): void {
    if (v === this.leading) return;
    this.leading = v;
    const fields = { lease: this.lease, identity: this.params.identity };
    if (v) {
      this.opts.log?.info('became leader', fields);
      this.safe(() => this.opts.onStartedLeading?.());
      this.safe(() => this.handlers?.onStartedLeading());
    } else {
      this.opts.log?.warn('stopped leading', fields);
      this.safe(() => this.opts.onStoppedLeading?.());
      this.safe(() => this.handlers?.onStoppedLeading());
    }
  }

  private observe(holder: string | undefined): void {
    if (holder === undefined || holder === this.observed) return;
    this.observed = holder;
    this.opts.log?.info('leader', { lease: this.lease, leader: holder });
    this.safe(() => this.opts.onNewLeader?.(holder));
  }

  /** One round; exposed for tests. */
  async step(): Promise<LeaseStepResult> {
    const now = this.now();
    const r = await leaseStep(this.client, this.params, now);
    if (r.outcome === 'leading') {
      this.lastRenew = now;
      this.observe(this.params.identity);
      this.setLeading(true);
    } else if (r.outcome === 'following') {
      this.observe(r.holder);
      this.setLeading(false);
    } else {
      if (r.error) this.failed(r.error);
      const deadline = (this.opts.renewDeadlineSeconds ?? 10) * 1000;
      if (this.leading && now - this.lastRenew > deadline) this.setLeading(false);
    }
    return r;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    const sleep = this.opts.sleep ?? defaultSleep;
    const period = (this.opts.retryPeriodSeconds ?? 2) * 1000;
    while (!signal.aborted) {
      await this.step();
      if (signal.aborted) break;
      // client-go's jitter: up to +20 % for followers, so candidates do not march in step.
      await sleep(this.leading ? period : period * (1 + 0.2 * Math.random()), signal);
    }
  }
}
