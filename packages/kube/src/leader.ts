// Lease-based leader election: the loop around core's `leaseStep` (the decision lives in core).
// Leading starts when a round writes the lease; it stops when another holder is seen, when renewals
// have failed for longer than the renew deadline, or on stop() (which releases the lease so a
// successor need not wait for expiry). Leadership is for efficiency, never for safety. The
// controller's Manager campaigns with it directly (its `elector` option), over any core Client.
//
// In a pod (the `pod` option, from the downward API) the holder records its pod, UID and container
// on the Lease, and a standby watches the holder's pod: any change of it (deleted, replaced,
// deleting, finished, its container terminated or restarted) runs a round at once, in which core's
// leaseStep judges the holder by a live read and takes over from a dead one without waiting for
// the lease to expire. The leader watches its own pod to know the container incarnation it records.
import {
  type Client,
  type LeaderLeaseParams,
  type LeaseHolderPod,
  type LeaseStepResult,
  type Logger,
  leaseHolderPod,
  leaseStep,
  ownContainer,
  type Pod,
  releaseLeaderLease,
  type TakeoverReason,
  type WatchEvent,
  type Watcher,
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
  /** This candidate took the lease over from another holder: it expired, or the holder's pod is dead. */
  onTakeover?(previousHolder: string, reason: TakeoverReason): void;
  /**
   * The pod this process runs in (downward API: POD_NAME, POD_NAMESPACE, POD_UID, and the container's
   * name). Recorded on the Lease while holding it; with it a standby watches the holder's pod. Unset
   * (outside a pod): nothing is recorded or watched, rounds run every retry period as before.
   */
  pod?: { namespace: string; name: string; uid: string; container?: string };
  /** Watches pods (the holder's, and our own); default: the client when it can watch. */
  watcher?: Watcher;
  /**
   * When this process started (ms): its own container's status is trusted (and its containerID and
   * restartCount recorded) only for a container started at most 10 s before. Default: the process's.
   */
  processStartMs?: number;
  /** For tests: how long to wait before watching a pod again after its watch ended. Default 1000. */
  rewatchDelayMs?: number;
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
  private readonly watcher: Watcher | undefined;
  /** Our own pod as last watched (for the container incarnation we record). */
  private selfPod: Pod | undefined;
  private stopSelfWatch: (() => void) | undefined;
  /** The watch of the holder's pod while following: `namespace/name`. */
  private holderWatch: { key: string; stop: () => void } | undefined;
  /** Aborted to end the wait between rounds early (a change of the holder's pod). */
  private wake: AbortController | undefined;
  private kicked = false;

  constructor(client: Client, opts: LeaderElectorOptions) {
    this.client = client;
    this.opts = opts;
    this.params = {
      namespace: opts.namespace,
      name: opts.name,
      identity: opts.identity,
      leaseDurationSeconds: opts.leaseDurationSeconds ?? 15,
    };
    const w = opts.watcher ?? (client as Partial<Watcher>);
    this.watcher = opts.pod && typeof w.watch === 'function' ? (w as Watcher) : undefined;
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
    if (this.running || this.abort.signal.aborted) return;
    const pod = this.opts.pod;
    if (pod && this.watcher && !this.stopSelfWatch) {
      this.stopSelfWatch = this.watchPod(pod.namespace, pod.name, (e) => {
        this.selfPod = e.type === 'DELETED' ? undefined : e.object;
      });
    }
    this.running = this.run();
  }

  /** Stops the loop; a leader releases the lease and gets onStoppedLeading. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.stopSelfWatch?.();
    this.unwatchHolder();
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

  /** Who we are for this round: the pod, and the container incarnation our own pod's status shows. */
  private self(): LeaseHolderPod | undefined {
    const pod = this.opts.pod;
    if (!pod) return undefined;
    const start = this.opts.processStartMs ?? globalThis.performance?.timeOrigin ?? this.now();
    return { ...pod, ...ownContainer(this.selfPod, pod, start - 10_000) };
  }

  /** One round; exposed for tests. */
  async step(): Promise<LeaseStepResult> {
    const now = this.now();
    const self = this.self();
    const r = await leaseStep(this.client, self ? { ...this.params, self } : this.params, now);
    if (r.outcome === 'leading') {
      this.lastRenew = now;
      if (r.decision?.action === 'takeover') {
        const { previousHolder, reason } = r.decision;
        this.opts.log?.info('took over the lease', { lease: this.lease, previousHolder, reason });
        this.safe(() => this.opts.onTakeover?.(previousHolder, reason));
      }
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
    this.retarget(r);
    return r;
  }

  /** Watch the pod of the holder we follow (not our own, not while leading or outside a pod). */
  private retarget(r: LeaseStepResult): void {
    const pod = this.opts.pod;
    if (!pod || !this.watcher || r.outcome === 'unknown') return;
    const holder = r.outcome === 'following' ? leaseHolderPod(r.lease) : undefined;
    const key = holder ? `${holder.namespace}/${holder.name}` : undefined;
    if (this.holderWatch?.key === key) return;
    this.unwatchHolder();
    if (!holder || !key || key === `${pod.namespace}/${pod.name}`) return;
    this.opts.log?.debug('watching the leader pod', { lease: this.lease, pod: key });
    // Any change of the holder's pod may be its death: judge it now, not at the next period.
    this.holderWatch = { key, stop: this.watchPod(holder.namespace, holder.name, () => this.kick()) };
  }

  private unwatchHolder(): void {
    this.holderWatch?.stop();
    this.holderWatch = undefined;
  }

  /** Runs a round as soon as the current one (or wait) ends. */
  private kick(): void {
    this.kicked = true;
    this.wake?.abort();
  }

  /** Watches one pod by name (fieldSelector), again after the watch ends, until the returned stop(). */
  private watchPod(namespace: string, name: string, onEvent: (e: WatchEvent<Pod>) => void): () => void {
    let stopped = false;
    let stopWatch: (() => void) | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const open = () => {
      timer = undefined;
      if (stopped || !this.watcher) return;
      stopWatch = this.watcher.watch(
        'Pod',
        // The server ends it every few minutes (a half-open connection does not last); the
        // retry-period rounds go on meanwhile, the watch only makes them prompt.
        { namespace, fieldSelector: { 'metadata.name': name }, timeoutSeconds: 300 },
        {
          onEvent: (e) => {
            if (!stopped) onEvent(e);
          },
          onClose: (error) => {
            if (stopped) return;
            if (error) {
              this.opts.log?.debug('pod watch ended', {
                lease: this.lease,
                pod: `${namespace}/${name}`,
                error: errorText(error),
              });
            }
            timer = setTimeout(open, this.opts.rewatchDelayMs ?? 1000);
            (timer as { unref?: () => void }).unref?.();
          },
        },
      );
    };
    open();
    return () => {
      stopped = true;
      stopWatch?.();
      if (timer !== undefined) clearTimeout(timer);
    };
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    const sleep = this.opts.sleep ?? defaultSleep;
    const period = (this.opts.retryPeriodSeconds ?? 2) * 1000;
    while (!signal.aborted) {
      this.kicked = false;
      await this.step();
      if (signal.aborted) break;
      // The holder's pod changed during the round: judge it again at once.
      if (this.kicked) continue;
      const wake = new AbortController();
      this.wake = wake;
      // client-go's jitter: up to +20 % for followers, so candidates do not march in step.
      await sleep(
        this.leading ? period : period * (1 + 0.2 * Math.random()),
        AbortSignal.any([signal, wake.signal]),
      );
      this.wake = undefined;
    }
  }
}
