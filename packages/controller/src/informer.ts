// Informers over core's Reader/Watcher ports: list, then watch from the list's resourceVersion;
// relist on 410 Gone; re-watch with backoff when a watch ends or fails; a watchdog restarts a watch
// that has been silent too long. The store serves reads (InformerCache implements core's Reader),
// and handlers get every change, with the previous object on updates and deletes.
import {
  ApiError,
  getPath,
  isApiError,
  KIND_INFO,
  type Kind,
  type KindMap,
  type KubeObject,
  keyString,
  type ListOptions,
  matchesList,
  type ObjectKey,
  type ObjectList,
  type Reader,
  type WatchEvent,
} from '@claimkit/core';
import type { Logger } from './log.ts';
import { realTimers, type Timers } from './timers.ts';

/**
 * What an informer needs: core's Reader.list and Watcher.watch. A watch may end or fail
 * asynchronously through `onClose` (client-node watches do; the in-memory model's never end).
 */
export interface InformerSource {
  list<K extends Kind>(kind: K, opts?: ListOptions): Promise<ObjectList<KindMap[K]>>;
  watch<K extends Kind>(
    kind: K,
    opts: ListOptions & { resourceVersion?: string },
    onEvent: (e: WatchEvent<KindMap[K]>) => void,
    onClose?: (err?: unknown) => void,
  ): (() => void) | Promise<() => void>;
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
export type Handler<T> = (type: ChangeType, obj: T, old: T | undefined) => void;

/** Items per list page when an informer (re)lists. */
export const LIST_PAGE_SIZE = 500;

export interface InformerOptions {
  namespace?: string;
  labelSelector?: string;
  timers?: Timers;
  log?: Logger;
  /** Keep indexes on these label keys, for label-selector lists on them (e.g. claimkit.dev/pool). */
  indexLabels?: string[];
  /** Keep indexes on these field paths, for field-selector lists on them (e.g. spec.podName). */
  indexFields?: string[];
  /** How long the first list waits out 429/503/504 answers before start() fails (default 60 s). */
  startRetryMs?: number;
  /** Restart a watch that delivered nothing for this long (default 5 min). */
  watchdogMs?: number;
}

export class Informer<K extends Kind> {
  readonly kind: K;
  private readonly source: InformerSource;
  private readonly opts: InformerOptions;
  private readonly timers: Timers;
  private readonly store = new Map<string, Map<string, KindMap[K]>>(); // namespace -> name -> obj
  private readonly handlers: Handler<KindMap[K]>[] = [];
  private rv = '';
  private stopWatch: (() => void) | undefined;
  private watchGen = 0;
  private stopped = false;
  private synced = false;
  private failures = 0;
  private lastEventAt = 0;
  private startedAt = 0;
  private watchdog: unknown;
  private retryTimer: unknown;
  private syncWaiters: (() => void)[] = [];
  /** Relists so far (for tests and logs). */
  relists = 0;

  constructor(kind: K, source: InformerSource, opts: InformerOptions = {}) {
    this.kind = kind;
    this.source = source;
    this.opts = opts;
    this.timers = opts.timers ?? realTimers;
  }

  on(h: Handler<KindMap[K]>): void {
    this.handlers.push(h);
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((r) => this.syncWaiters.push(r));
  }

  /** Lists (retrying with backoff) and watches; resolves after the first successful list. */
  async start(): Promise<void> {
    this.stopped = false;
    this.startedAt = this.timers.now();
    await this.relist(true);
    this.armWatchdog();
  }

  stop(): void {
    this.stopped = true;
    this.watchGen++;
    this.stopWatch?.();
    this.stopWatch = undefined;
    if (this.watchdog !== undefined) this.timers.clearTimeout(this.watchdog);
    if (this.retryTimer !== undefined) this.timers.clearTimeout(this.retryTimer);
  }

  get(namespace: string, name: string): KindMap[K] | undefined {
    return this.store.get(namespace)?.get(name);
  }

  list(namespace?: string): KindMap[K][] {
    if (namespace !== undefined) return [...(this.store.get(namespace)?.values() ?? [])];
    const out: KindMap[K][] = [];
    for (const b of this.store.values()) for (const o of b.values()) out.push(o);
    return out;
  }

  // ---- indexes: "label:<key>" or "field:<path>" -> namespace -> value -> name -> obj ----
  // The reconcilers ask for "pods labelled claimed-by=X" and "claims with spec.podName=P" on every
  // pass; without an index each question scans the whole namespace (O(n^2) over a resync).
  private readonly indexes = new Map<string, Map<string, Map<string, Map<string, KindMap[K]>>>>();

  private indexValues(o: KindMap[K]): [string, string][] {
    const out: [string, string][] = [];
    for (const l of this.opts.indexLabels ?? []) {
      const v = o.metadata.labels?.[l];
      if (v !== undefined) out.push([`label:${l}`, v]);
    }
    for (const f of this.opts.indexFields ?? []) {
      const v = getPath(o, f);
      if (v !== undefined && v !== null && v !== '') out.push([`field:${f}`, String(v)]);
    }
    return out;
  }

  private reindex(ns: string, o: KindMap[K]): void {
    for (const [index, v] of this.indexValues(o)) {
      let byNs = this.indexes.get(index);
      if (!byNs) {
        byNs = new Map();
        this.indexes.set(index, byNs);
      }
      let byValue = byNs.get(ns);
      if (!byValue) {
        byValue = new Map();
        byNs.set(ns, byValue);
      }
      let m = byValue.get(v);
      if (!m) {
        m = new Map();
        byValue.set(v, m);
      }
      m.set(o.metadata.name, o);
    }
  }

  private unindex(ns: string, o: KindMap[K]): void {
    for (const [index, v] of this.indexValues(o)) {
      const byValue = this.indexes.get(index)?.get(ns);
      const m = byValue?.get(v);
      m?.delete(o.metadata.name);
      if (m && m.size === 0) byValue!.delete(v);
    }
  }

  /** The index entry for value (empty when nothing matches); undefined when there is no such index. */
  private bucket(
    namespace: string,
    index: string,
    value: string,
  ): ReadonlyMap<string, KindMap[K]> | undefined {
    const [type, name] = [index.slice(0, index.indexOf(':')), index.slice(index.indexOf(':') + 1)];
    const known = type === 'label' ? this.opts.indexLabels : this.opts.indexFields;
    if (!known?.includes(name)) return undefined;
    return this.indexes.get(index)?.get(namespace)?.get(value) ?? new Map();
  }

  /**
   * Objects matching every given field and label through the narrowest index that covers one of
   * them ("Idle pods of pool p" reads the Idle ones, not the whole pool); undefined when none is
   * indexed. Only the chosen entry is copied; the caller still filters by the rest.
   */
  listNarrowest(
    namespace: string,
    fields: [string, string][],
    labels: [string, string][],
  ): KindMap[K][] | undefined {
    let best: ReadonlyMap<string, KindMap[K]> | undefined;
    for (const [index, value] of [
      ...fields.map(([f, v]) => [`field:${f}`, v] as const),
      ...labels.map(([l, v]) => [`label:${l}`, v] as const),
    ]) {
      const b = this.bucket(namespace, index, value);
      if (b !== undefined && (best === undefined || b.size < best.size)) best = b;
    }
    return best === undefined ? undefined : [...best.values()];
  }

  get size(): number {
    let n = 0;
    for (const b of this.store.values()) n += b.size;
    return n;
  }

  get resourceVersion(): string {
    return this.rv;
  }

  private listOpts(): ListOptions {
    return {
      ...(this.opts.namespace ? { namespace: this.opts.namespace } : {}),
      ...(this.opts.labelSelector ? { labelSelector: this.opts.labelSelector } : {}),
    };
  }

  /**
   * Lists in pages of LIST_PAGE_SIZE, so a large namespace is never one huge response held in
   * memory at once (the transient peak would set the process's RSS for good).
   */
  private async listAllPages(): Promise<ObjectList<KindMap[K]>> {
    const items: KindMap[K][] = [];
    let page = await this.source.list(this.kind, { ...this.listOpts(), limit: LIST_PAGE_SIZE });
    const resourceVersion = page.resourceVersion;
    for (;;) {
      for (const o of page.items) items.push(this.slim(o));
      if (!page.continue || this.stopped) break;
      page = await this.source.list(this.kind, {
        ...this.listOpts(),
        limit: LIST_PAGE_SIZE,
        continue: page.continue,
      });
    }
    return { items, resourceVersion: page.resourceVersion || resourceVersion };
  }

  /** The first list's error propagates (start fails: bad RBAC, unreachable); later ones retry. */
  private async relist(first = false): Promise<void> {
    this.watchGen++;
    this.stopWatch?.();
    this.stopWatch = undefined;
    let list: ObjectList<KindMap[K]>;
    try {
      list = await this.listAllPages();
    } catch (e) {
      // The first list fails start() on a permanent error (RBAC, CRDs missing, unreachable: code 0),
      // but waits out an API server that answered "not now" (429, 503, 504) for up to startRetryMs.
      const answeredBusy = isApiError(e) && e.transient && e.code !== 0;
      if (first && !(answeredBusy && this.timers.now() - this.startedAt < (this.opts.startRetryMs ?? 60_000)))
        throw e;
      if (first) {
        const ms = Math.min(5000, Math.max(200, ((e as ApiError).retryAfterSeconds ?? 0) * 1000));
        await new Promise<void>((r) => this.timers.setTimeout(r, ms));
        return this.relist(true);
      }
      this.opts.log?.warn('list failed; retrying', { kind: this.kind, error: errorText(e) });
      this.retry(() => this.relist());
      return;
    }
    if (this.stopped) return;
    this.relists++;
    const seen = new Set<string>();
    for (const o of list.items) {
      const ns = o.metadata.namespace ?? '';
      seen.add(keyString({ namespace: ns, name: o.metadata.name }));
      this.apply('ADDED', o);
    }
    for (const o of this.list()) {
      const k = keyString({ namespace: o.metadata.namespace ?? '', name: o.metadata.name });
      if (!seen.has(k)) this.apply('DELETED', o);
    }
    this.rv = list.resourceVersion;
    this.failures = 0;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
    await this.watch();
  }

  private async watch(): Promise<void> {
    if (this.stopped) return;
    const gen = ++this.watchGen;
    this.lastEventAt = this.timers.now();
    const onEvent = (e: WatchEvent<KindMap[K]>) => {
      if (gen !== this.watchGen) return;
      this.lastEventAt = this.timers.now();
      const rv = e.object.metadata.resourceVersion;
      if (rv) this.rv = rv;
      this.apply(e.type, e.object);
    };
    const onClose = (err?: unknown) => {
      if (gen !== this.watchGen || this.stopped) return;
      this.watchGen++;
      this.stopWatch = undefined;
      if (isApiError(err, 'Gone') || (err as { code?: number } | undefined)?.code === 410) {
        this.opts.log?.info('watch expired; relisting', { kind: this.kind });
        void this.relist();
        return;
      }
      if (err) {
        // 429 is the server asking to come back later (e.g. "storage is (re)initializing" right
        // after a CRD is established): expected, so not a warning.
        const log = isApiError(err, 'TooManyRequests') ? this.opts.log?.info : this.opts.log?.warn;
        log?.call(this.opts.log, 'watch failed; re-watching', { kind: this.kind, error: errorText(err) });
        this.retry(() => this.watch());
      } else {
        void this.watch(); // a normal end (server timeout): resume at once
      }
    };
    try {
      const stop = await this.source.watch(
        this.kind,
        { ...this.listOpts(), resourceVersion: this.rv },
        onEvent,
        onClose,
      );
      if (gen !== this.watchGen) stop();
      else this.stopWatch = stop;
      this.failures = 0;
    } catch (e) {
      if (gen !== this.watchGen) return;
      onClose(e ?? new ApiError('Unavailable', 'watch failed'));
    }
  }

  private retry(fn: () => Promise<void>): void {
    if (this.stopped) return;
    const ms = Math.min(30_000, 200 * 2 ** Math.min(this.failures++, 10));
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = undefined;
      void fn();
    }, ms);
  }

  private armWatchdog(): void {
    const period = this.opts.watchdogMs ?? 300_000;
    this.watchdog = this.timers.setTimeout(() => {
      if (this.stopped) return;
      if (this.stopWatch && this.timers.now() - this.lastEventAt >= period) {
        this.opts.log?.info('watch silent; restarting it', { kind: this.kind });
        void this.watch();
      }
      this.armWatchdog();
    }, period);
  }

  /**
   * Nothing decides on managedFields; dropping them roughly halves what a cached pod costs.
   * (A rebuilt metadata object, not `delete`, which would leave it in slow dictionary mode.)
   */
  private slim(obj: KindMap[K]): KindMap[K] {
    if ((obj.metadata as { managedFields?: unknown }).managedFields === undefined) return obj;
    const { managedFields: _drop, ...metadata } = obj.metadata as typeof obj.metadata & {
      managedFields?: unknown;
    };
    return { ...obj, metadata } as KindMap[K];
  }

  private apply(type: ChangeType, obj: KindMap[K]): void {
    obj = this.slim(obj);
    const ns = obj.metadata.namespace ?? '';
    let b = this.store.get(ns);
    const old = b?.get(obj.metadata.name);
    if (old) this.unindex(ns, old);
    if (type === 'DELETED') {
      if (!b || !old) return;
      b.delete(obj.metadata.name);
      if (b.size === 0) this.store.delete(ns);
    } else {
      if (
        old &&
        old.metadata.resourceVersion === obj.metadata.resourceVersion &&
        old.metadata.uid === obj.metadata.uid
      ) {
        this.reindex(ns, old);
        return; // a relist repeating what we have
      }
      if (!b) {
        b = new Map();
        this.store.set(ns, b);
      }
      b.set(obj.metadata.name, obj);
      this.reindex(ns, obj);
    }
    const t: ChangeType = type === 'DELETED' ? 'DELETED' : old ? 'MODIFIED' : 'ADDED';
    for (const h of this.handlers) {
      try {
        h(t, type === 'DELETED' ? (old as KindMap[K]) : obj, old);
      } catch (e) {
        this.opts.log?.error('event handler threw', { kind: this.kind, error: errorText(e) });
      }
    }
  }
}

/** core's Reader over informer stores; kinds without an informer are read live. */
export class InformerCache implements Reader {
  private readonly informers = new Map<Kind, Informer<Kind>>();
  private readonly live: Reader;

  constructor(live: Reader) {
    this.live = live;
  }

  add<K extends Kind>(inf: Informer<K>): void {
    this.informers.set(inf.kind, inf as unknown as Informer<Kind>);
  }

  informer<K extends Kind>(kind: K): Informer<K> | undefined {
    return this.informers.get(kind) as unknown as Informer<K> | undefined;
  }

  async get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]> {
    const inf = this.informers.get(kind);
    if (!inf) return this.live.get(kind, key);
    const o = inf.get(key.namespace, key.name);
    if (!o) throw new ApiError('NotFound', `${KIND_INFO[kind].plural} "${key.name}" not found (cache)`);
    return o as KindMap[K];
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    const inf = this.informers.get(kind);
    if (!inf) return this.live.list(kind, opts);
    const ml = typeof opts.labelSelector === 'object' ? opts.labelSelector.matchLabels : undefined;
    const exprs = typeof opts.labelSelector === 'object' ? opts.labelSelector.matchExpressions : undefined;
    const only = ml && !exprs?.length ? Object.entries(ml) : [];
    const fields = Object.entries(opts.fieldSelector ?? {});
    const indexed =
      opts.namespace !== undefined ? inf.listNarrowest(opts.namespace, fields, only) : undefined;
    const items = ((indexed ?? inf.list(opts.namespace)) as KubeObject[]).filter((o) => matchesList(o, opts));
    return { items: items as KindMap[K][], resourceVersion: inf.resourceVersion };
  }
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
