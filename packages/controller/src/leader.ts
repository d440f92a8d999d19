// Leader election on a coordination.k8s.io Lease through core's Client port (client-go's
// algorithm): acquire when the Lease is free or expired, renew every retry period, step down when a
// renewal has not succeeded for renewDeadline, give the Lease up on release(). Every write carries
// the resourceVersion it read, so two candidates never both win one round. Efficiency only: the
// reconcilers keep every invariant with two replicas active at once.
import { type Client, isApiError, type Lease } from '@claimkit/core';
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

export class LeaseElector implements Elector {
  private readonly o: Required<Omit<LeaseElectorOptions, 'log'>> & { log?: Logger };
  private leading = false;
  private stopped = false;
  private lastRenew = 0;
  private timer: unknown;
  private lease: Lease | undefined;
  private handlers: { onStartedLeading: () => void; onStoppedLeading: () => void } | undefined;
  private running: Promise<void> | undefined;

  constructor(opts: LeaseElectorOptions) {
    this.o = {
      name: 'claimkit-controller',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      timers: realTimers,
      ...opts,
    };
  }

  get isLeader(): boolean {
    return this.leading;
  }

  run(handlers: { onStartedLeading: () => void; onStoppedLeading: () => void }): void {
    this.handlers = handlers;
    void this.tick();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.o.timers.setTimeout(() => void this.tick(), this.o.retryPeriodMs);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const p = this.tryAcquireOrRenew();
    this.running = p.then(() => undefined);
    const ok = await p;
    const now = this.o.timers.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.o.log?.info('became leader', {
          lease: `${this.o.namespace}/${this.o.name}`,
          identity: this.o.identity,
        });
        this.handlers?.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenew >= this.o.renewDeadlineMs) {
      this.leading = false;
      this.o.log?.warn('lost leadership', { lease: `${this.o.namespace}/${this.o.name}` });
      this.handlers?.onStoppedLeading();
    }
    this.schedule();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.o.timers.now();
    const nowIso = microTime(now);
    const key = { namespace: this.o.namespace, name: this.o.name };
    let cur: Lease;
    try {
      cur = await this.o.client.get('Lease', key);
    } catch (e) {
      if (!isApiError(e, 'NotFound')) {
        this.o.log?.warn('reading the Lease failed', { error: (e as Error).message });
        return false;
      }
      try {
        this.lease = await this.o.client.create<Lease>({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: key,
          spec: {
            holderIdentity: this.o.identity,
            leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
            acquireTime: nowIso,
            renewTime: nowIso,
            leaseTransitions: 0,
          },
        });
        return true;
      } catch {
        return false;
      }
    }
    const s = cur.spec;
    const held = !!s.holderIdentity && s.holderIdentity !== this.o.identity;
    const renewed = s.renewTime ? Date.parse(s.renewTime) : 0;
    const expired = renewed + (s.leaseDurationSeconds ?? 15) * 1000 <= now;
    if (held && !expired) return false;
    const mine = s.holderIdentity === this.o.identity;
    try {
      this.lease = await this.o.client.update<Lease>({
        ...cur,
        spec: {
          holderIdentity: this.o.identity,
          leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
          acquireTime: mine && s.acquireTime ? s.acquireTime : nowIso,
          renewTime: nowIso,
          leaseTransitions: (s.leaseTransitions ?? 0) + (mine ? 0 : 1),
        },
      });
      return true;
    } catch {
      return false;
    }
  }

  async release(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.o.timers.clearTimeout(this.timer);
    await this.running;
    if (!this.leading || !this.lease) return;
    this.leading = false;
    try {
      const cur = await this.o.client.get('Lease', { namespace: this.o.namespace, name: this.o.name });
      if (cur.spec.holderIdentity !== this.o.identity) return;
      await this.o.client.update<Lease>({
        ...cur,
        spec: {
          ...cur.spec,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          renewTime: microTime(this.o.timers.now()),
        },
      });
      this.o.log?.info('released the Lease', { lease: `${this.o.namespace}/${this.o.name}` });
    } catch (e) {
      this.o.log?.warn('releasing the Lease failed', { error: (e as Error).message });
    }
  }
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');
