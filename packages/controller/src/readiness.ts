// Whether the controller can reach the API server and its informers are in sync with it, for
// /readyz. It watches what the informers' source does (list, watch, their outcomes) and probes the
// API server itself: often while something failed, rarely while all is well (a partition that
// leaves the watches silent rather than broken shows up there).
//   - a failed list, or a watch ended by an error other than 410, makes that kind not synced;
//   - a successful list syncs it; so does an event or bookmark of a later watch, or a probe that
//     succeeded after the later watch was opened (the server answers, and the watch did not fail);
//   - ready = the first sync is done, the last probe succeeded and every kind is synced.
import {
  type Interceptors,
  intercept,
  isApiError,
  type Kind,
  type ListWatcher,
  type Timers,
} from '@claimkit/core';
import { errorText } from '@claimkit/kube';

export interface ReadinessOptions {
  timers: Timers;
  /** One cheap request to the API server; throws when it cannot be reached. */
  probe: () => Promise<unknown>;
  /** Probe period while everything is synced (default 10 s) and while something is not (default 1 s). */
  probeIntervalMs?: number;
  recoveringProbeIntervalMs?: number;
  onChange?: (ready: boolean, reason: string) => void;
}

type KindState = { state: 'failed'; error: string } | { state: 'rewatching'; since: number };

export class Readiness {
  private readonly opts: ReadinessOptions;
  private readonly notSynced = new Map<Kind, KindState>();
  private initialSync = false;
  private probeError: string | undefined;
  private probing = false;
  private timer: unknown;
  private timerFast = false;
  private stopped = true;
  private lastReady = false;
  /** Orders watch starts and probe sends: a probe confirms the watches opened before it was sent. */
  private tick = 0;

  constructor(opts: ReadinessOptions) {
    this.opts = opts;
  }

  /** The source the informers use, reporting to this tracker. */
  track(source: ListWatcher): ListWatcher {
    const hooks: Interceptors = {
      request: async (call, next) => {
        try {
          const result = await next();
          if (call.verb === 'list') this.synced(call.kind);
          return result;
        } catch (e) {
          if (call.verb === 'list') this.failed(call.kind, e);
          throw e;
        }
      },
      watch: (call, next) => {
        const kind = call.kind;
        const cur = this.notSynced.get(kind);
        if (cur?.state === 'failed') this.notSynced.set(kind, { state: 'rewatching', since: ++this.tick });
        return next({
          ...call,
          handlers: {
            ...call.handlers,
            onEvent: (e) => {
              this.synced(kind);
              call.handlers.onEvent(e);
            },
            onBookmark: (rv) => {
              this.synced(kind);
              call.handlers.onBookmark?.(rv);
            },
            onClose: (err) => {
              if (err) this.failed(kind, err);
              call.handlers.onClose?.(err);
            },
          },
        });
      },
    };
    return intercept(source, hooks);
  }

  /** The informers' first sync is done: from now on readiness follows the API server. */
  start(): void {
    this.initialSync = true;
    this.stopped = false;
    this.arm();
    this.changed();
  }

  stop(): void {
    this.stopped = true;
    this.initialSync = false;
    if (this.timer !== undefined) this.opts.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.changed();
  }

  get ready(): boolean {
    return this.initialSync && this.probeError === undefined && this.notSynced.size === 0;
  }

  /** Why not ready ('' when ready). */
  get reason(): string {
    if (!this.initialSync) return 'informers not synced';
    if (this.probeError !== undefined) return `API server unreachable: ${this.probeError}`;
    if (this.notSynced.size > 0) {
      const kinds = [...this.notSynced].map(([k, s]) => (s.state === 'failed' ? `${k} (${s.error})` : k));
      return `informers not synced: ${kinds.join(', ')}`;
    }
    return '';
  }

  /** Probes the API server once now (the timer does this on its own). */
  async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    const sentAt = ++this.tick;
    try {
      await this.opts.probe();
      this.probeError = undefined;
      for (const [kind, s] of this.notSynced)
        if (s.state === 'rewatching' && s.since < sentAt) this.notSynced.delete(kind);
    } catch (e) {
      this.probeError = errorText(e);
    } finally {
      this.probing = false;
    }
    this.changed();
  }

  private synced(kind: Kind): void {
    if (this.notSynced.delete(kind)) this.changed();
  }

  private failed(kind: Kind, e: unknown): void {
    // 410 Gone: the informer lists again at once (the server answered), which syncs the kind.
    const error = isApiError(e, 'Gone') ? 'relisting' : errorText(e);
    this.notSynced.set(kind, { state: 'failed', error });
    this.changed();
    // Look again soon rather than at the next slow probe (a fast one already pending stays).
    if (!this.stopped && !this.probing && !this.timerFast) this.arm();
  }

  private arm(): void {
    if (this.timer !== undefined) this.opts.timers.clearTimeout(this.timer);
    this.timerFast = !this.ready;
    const ms = this.timerFast
      ? (this.opts.recoveringProbeIntervalMs ?? 1_000)
      : (this.opts.probeIntervalMs ?? 10_000);
    this.timer = this.opts.timers.setTimeout(async () => {
      this.timer = undefined;
      if (this.stopped) return;
      await this.probe();
      if (!this.stopped && this.timer === undefined) this.arm();
    }, ms);
  }

  private changed(): void {
    const ready = this.ready;
    if (ready === this.lastReady) return;
    this.lastReady = ready;
    this.opts.onChange?.(ready, this.reason);
  }
}
