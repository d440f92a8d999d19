// List + watch per kind into a local store, as client-go's reflector/informer does: relist on 410
// Gone, resume from the last resourceVersion whenever a watch ends (the server's timeout, the
// inactivity watchdog, a dropped connection), reconnect with exponential backoff and jitter.
// InformerCache is core's Reader over the stores.
import {
  ApiError,
  isApiError,
  KIND_INFO,
  type Kind,
  type KindMap,
  keyString,
  type LabelSelector,
  type ListOptions,
  matchesList,
  type ObjectKey,
  type ObjectList,
  type Reader,
  type WatchEvent,
} from '@claimkit/core';
import type { ListWatcher, WatchHandle } from './client.ts';

export interface InformerHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions {
  namespace?: string;
  labelSelector?: LabelSelector | string;
  /** Restart a watch that delivered nothing (events or bookmarks) for this long. Default 60 s. */
  watchdogSeconds?: number;
  /** Backoff after failures: initial and maximum delay (full jitter). Defaults 500 ms and 30 s. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Server-side watch timeout range in seconds, randomised (client-go: 5-10 min). */
  watchTimeoutSeconds?: [number, number];
  /** Failures of list/watch and handler exceptions; the informer keeps going. */
  onError?(e: unknown): void;
  /** For tests: random in [0,1). */
  random?: () => number;
}

export interface InformerStats {
  lists: number;
  watches: number;
  /** Lists caused by 410 Gone. */
  relists: number;
  failures: number;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
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

export class Informer<K extends Kind> {
  readonly kind: K;
  readonly stats: InformerStats = { lists: 0, watches: 0, relists: 0, failures: 0 };
  private readonly source: ListWatcher;
  private readonly opts: InformerOptions;
  private readonly store = new Map<string, KindMap[K]>();
  private readonly handlers = new Set<InformerHandler<KindMap[K]>>();
  private rv = '';
  private synced = false;
  private needList = true;
  private running: Promise<void> | undefined;
  private readonly stopSignal = new AbortController();
  private watch: WatchHandle | undefined;
  private syncWaiters: (() => void)[] = [];

  constructor(source: ListWatcher, kind: K, opts: InformerOptions = {}) {
    this.source = source;
    this.kind = kind;
    this.opts = opts;
  }

  /** Registers handlers; objects already in the store are replayed as adds. Returns an unregister. */
  addHandler(h: InformerHandler<KindMap[K]>): () => void {
    this.handlers.add(h);
    if (this.synced) for (const o of this.store.values()) this.call(() => h.onAdd?.(o));
    return () => this.handlers.delete(h);
  }

  start(): void {
    if (this.running || this.stopSignal.signal.aborted) return;
    this.running = this.run();
  }

  async stop(): Promise<void> {
    this.stopSignal.abort();
    this.watch?.stop();
    for (const w of this.syncWaiters) w();
    this.syncWaiters = [];
    await this.running;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has been stored; rejects when `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const fail = () => reject(signal?.reason ?? new Error(`informer ${this.kind}: stopped before sync`));
      if (signal?.aborted) return fail();
      const onAbort = () => fail();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        if (this.synced) resolve();
        else fail();
      });
    });
  }

  /** The last resourceVersion seen (list, event or bookmark). */
  get resourceVersion(): string {
    return this.rv;
  }

  /** The stored object (shared: do not mutate). */
  getCached(key: ObjectKey): KindMap[K] | undefined {
    return this.store.get(keyString(key));
  }

  /** Stored objects matching `opts` (shared: do not mutate). */
  listCached(opts: ListOptions = {}): KindMap[K][] {
    const out: KindMap[K][] = [];
    for (const o of this.store.values()) if (matchesList(o, opts)) out.push(o);
    return out;
  }

  get size(): number {
    return this.store.size;
  }

  // ---------------- loop ----------------

  private report(e: unknown): void {
    try {
      this.opts.onError?.(e);
    } catch {
      // ignore
    }
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.report(e);
    }
  }

  private backoff(attempt: number): number {
    const initial = this.opts.backoffInitialMs ?? 500;
    const max = this.opts.backoffMaxMs ?? 30_000;
    const cap = Math.min(max, initial * 2 ** Math.min(attempt, 20));
    const r = (this.opts.random ?? Math.random)();
    // "Equal jitter": at least half the delay, so a failing server is never hammered.
    return cap / 2 + (cap / 2) * r;
  }

  private listOptions(): ListOptions {
    const o: ListOptions = {};
    if (this.opts.namespace) o.namespace = this.opts.namespace;
    if (this.opts.labelSelector !== undefined) o.labelSelector = this.opts.labelSelector;
    return o;
  }

  private async run(): Promise<void> {
    const stop = this.stopSignal.signal;
    let attempt = 0;
    while (!stop.aborted) {
      try {
        if (this.needList) {
          const list = await this.source.list(this.kind, this.listOptions());
          if (stop.aborted) break;
          this.replace(list);
          this.needList = false;
        }
        const t0 = Date.now();
        const { error, events } = await this.watchOnce();
        if (stop.aborted) break;
        if (error) throw error;
        // A normal end (server timeout, watchdog): resume at once, unless watches end instantly.
        if (events === 0 && Date.now() - t0 < 1000) await sleep(this.backoff(attempt++), stop);
        else attempt = 0;
      } catch (e) {
        if (stop.aborted) break;
        if (isApiError(e, 'Gone')) {
          // The resourceVersion is too old: list again (no delay: the server is answering).
          this.stats.relists++;
          this.needList = true;
          continue;
        }
        this.stats.failures++;
        this.report(e);
        await sleep(this.backoff(attempt++), stop);
      }
    }
  }

  private watchOnce(): Promise<{ error?: ApiError; events: number }> {
    const [lo, hi] = this.opts.watchTimeoutSeconds ?? [300, 600];
    const timeoutSeconds = Math.floor(lo + (hi - lo) * (this.opts.random ?? Math.random)());
    this.stats.watches++;
    let events = 0;
    return new Promise((resolve) => {
      this.watch = this.source.watchStream(
        this.kind,
        {
          ...this.listOptions(),
          resourceVersion: this.rv,
          allowWatchBookmarks: true,
          timeoutSeconds,
          inactivityMs: (this.opts.watchdogSeconds ?? 60) * 1000,
        },
        {
          onEvent: (e) => {
            events++;
            this.apply(e);
          },
          onBookmark: (rv) => {
            events++;
            this.rv = rv;
          },
          onClose: (error) => {
            this.watch = undefined;
            resolve(error ? { error, events } : { events });
          },
        },
      );
      if (this.stopSignal.signal.aborted) this.watch.stop();
    });
  }

  private replace(list: ObjectList<KindMap[K]>): void {
    this.stats.lists++;
    const old = new Map(this.store);
    this.store.clear();
    for (const o of list.items) this.store.set(keyString(keyOf(o)), o);
    this.rv = list.resourceVersion;
    for (const [k, o] of this.store) {
      const prev = old.get(k);
      if (!prev) this.emit('add', undefined, o);
      else if (
        prev.metadata.resourceVersion !== o.metadata.resourceVersion ||
        prev.metadata.uid !== o.metadata.uid
      )
        this.emit('update', prev, o);
    }
    for (const [k, o] of old) if (!this.store.has(k)) this.emit('delete', o, o);
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters) w();
      this.syncWaiters = [];
    }
  }

  private apply(e: WatchEvent<KindMap[K]>): void {
    const o = e.object;
    const k = keyString(keyOf(o));
    if (o.metadata.resourceVersion) this.rv = o.metadata.resourceVersion;
    const prev = this.store.get(k);
    if (e.type === 'DELETED') {
      this.store.delete(k);
      this.emit('delete', prev ?? o, o);
      return;
    }
    this.store.set(k, o);
    if (prev) this.emit('update', prev, o);
    else this.emit('add', undefined, o);
  }

  private emit(type: 'add' | 'update' | 'delete', prev: KindMap[K] | undefined, o: KindMap[K]): void {
    for (const h of this.handlers) {
      if (type === 'add') this.call(() => h.onAdd?.(o));
      else if (type === 'update') this.call(() => h.onUpdate?.(prev!, o));
      // On delete the last known state (the deleted object from the event is usually newer).
      else this.call(() => h.onDelete?.(o));
    }
  }
}

function keyOf(o: { metadata: { namespace?: string; name: string } }): ObjectKey {
  return { namespace: o.metadata.namespace ?? '', name: o.metadata.name };
}

export interface InformerCacheOptions extends Omit<InformerOptions, 'labelSelector'> {}

/**
 * Informers by kind and core's Reader over their stores (clones, so callers may mutate what they
 * read). Register every kind before `start()`; reading a kind without an informer is an error.
 */
export class InformerCache implements Reader {
  private readonly source: ListWatcher;
  private readonly opts: InformerCacheOptions;
  private readonly informers = new Map<Kind, Informer<Kind>>();
  private started = false;

  constructor(source: ListWatcher, opts: InformerCacheOptions = {}) {
    this.source = source;
    this.opts = opts;
  }

  /** The informer of `kind`, created on first use (with `labelSelector` then, if given). */
  informerFor<K extends Kind>(kind: K, opts: { labelSelector?: LabelSelector | string } = {}): Informer<K> {
    let inf = this.informers.get(kind) as Informer<K> | undefined;
    if (!inf) {
      inf = new Informer(this.source, kind, { ...this.opts, ...opts });
      this.informers.set(kind, inf as unknown as Informer<Kind>);
      if (this.started) inf.start();
    }
    return inf;
  }

  start(): void {
    this.started = true;
    for (const inf of this.informers.values()) inf.start();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
  }

  private informer<K extends Kind>(kind: K): Informer<K> {
    const inf = this.informers.get(kind);
    if (!inf) throw new Error(`InformerCache: no informer for ${kind} (register it with informerFor first)`);
    return inf as unknown as Informer<K>;
  }

  async get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]> {
    const o = this.informer(kind).getCached(key);
    if (!o) throw new ApiError('NotFound', `${KIND_INFO[kind].plural} "${key.name}" not found (cache)`);
    return structuredClone(o);
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    const inf = this.informer(kind);
    return {
      items: inf.listCached(opts).map((o) => structuredClone(o)),
      resourceVersion: inf.resourceVersion,
    };
  }
}
