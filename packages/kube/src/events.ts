// core's EventRecorder writing core/v1 Events. Repeats of the same (object, type, reason, message)
// within the aggregation window patch `count` and `lastTimestamp` of the Event already written,
// as client-go's recorder does. Recording never throws: events are best effort.
import {
  type EventRecorder,
  type EventSpec,
  isApiError,
  KIND_INFO,
  type KubeEvent,
  toSecondsTimestamp,
  type Writer,
} from '@claimkit/core';

export interface KubeEventRecorderOptions {
  /** `source.component` and `reportingComponent`, e.g. `claimkit-controller`. */
  component: string;
  /** `source.host` / `reportingInstance`, e.g. the pod name. */
  instance?: string;
  clock?: { now(): number };
  /** Repeats within this window are aggregated. Default 10 minutes. */
  aggregateWindowMs?: number;
  /** How many distinct events to remember for aggregation. Default 4096. */
  maxTracked?: number;
  onError?(e: unknown, event: EventSpec): void;
}

interface Tracked {
  namespace: string;
  name: string;
  count: number;
  lastMs: number;
}

export class KubeEventRecorder implements EventRecorder {
  private readonly client: Pick<Writer, 'create' | 'patch'>;
  private readonly opts: KubeEventRecorderOptions;
  private readonly tracked = new Map<string, Tracked>();
  /** Per-key chains, so two repeats in flight do not both create. */
  private readonly inflight = new Map<string, Promise<void>>();
  private seq = 0;

  constructor(client: Pick<Writer, 'create' | 'patch'>, opts: KubeEventRecorderOptions) {
    this.client = client;
    this.opts = opts;
  }

  record(e: EventSpec): Promise<void> {
    const r = e.regarding;
    const key = JSON.stringify([r.kind, r.namespace, r.name, r.uid ?? '', e.type, e.reason, e.message]);
    const prev = this.inflight.get(key) ?? Promise.resolve();
    const next = prev.then(() => this.write(key, e)).catch((err: unknown) => this.fail(err, e));
    this.inflight.set(key, next);
    void next.finally(() => {
      if (this.inflight.get(key) === next) this.inflight.delete(key);
    });
    return next;
  }

  private fail(err: unknown, e: EventSpec): void {
    try {
      this.opts.onError?.(err, e);
    } catch {
      // never throw
    }
  }

  private now(): number {
    return this.opts.clock?.now() ?? Date.now();
  }

  private async write(key: string, e: EventSpec): Promise<void> {
    const now = this.now();
    const ts = toSecondsTimestamp(now);
    const window = this.opts.aggregateWindowMs ?? 600_000;
    const t = this.tracked.get(key);
    if (t && now - t.lastMs < window) {
      try {
        await this.client.patch(
          'Event',
          { namespace: t.namespace, name: t.name },
          { count: t.count + 1, lastTimestamp: ts },
        );
        t.count++;
        t.lastMs = now;
        this.touch(key, t);
        return;
      } catch (err) {
        if (!isApiError(err, 'NotFound')) throw err;
        // The Event expired (the API server's TTL): write a new one.
      }
    }
    const r = e.regarding;
    const namespace = r.namespace || 'default';
    const name = `${r.name}.${now.toString(16)}${(this.seq++ % 0x1000).toString(16).padStart(3, '0')}`;
    const ev: KubeEvent & Record<string, unknown> = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace, name },
      involvedObject: {
        apiVersion: KIND_INFO[r.kind]?.apiVersion ?? '',
        kind: r.kind,
        name: r.name,
        namespace: r.namespace,
        ...(r.uid ? { uid: r.uid } : {}),
      },
      reason: e.reason,
      message: e.message.length > 1024 ? `${e.message.slice(0, 1021)}...` : e.message,
      type: e.type,
      count: 1,
      firstTimestamp: ts,
      lastTimestamp: ts,
      source: { component: this.opts.component, ...(this.opts.instance ? { host: this.opts.instance } : {}) },
      reportingComponent: this.opts.component,
      reportingInstance: this.opts.instance ?? '',
    };
    await this.client.create(ev);
    this.touch(key, { namespace, name, count: 1, lastMs: now });
  }

  private touch(key: string, t: Tracked): void {
    this.tracked.delete(key);
    this.tracked.set(key, t);
    const max = this.opts.maxTracked ?? 4096;
    while (this.tracked.size > max) {
      const oldest = this.tracked.keys().next().value;
      if (oldest === undefined) break;
      this.tracked.delete(oldest);
    }
  }
}
