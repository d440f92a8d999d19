// List + watch of one kind into an indexed store, as client-go's reflector and informer do, over
// core's ListWatcher port (the kube client in a process, the in-memory ApiModel in tests):
// - lists in pages, then watches from the list's resourceVersion, with bookmarks;
// - a watch that ends normally (server timeout, idle connection) resumes from the last
//   resourceVersion seen (event or bookmark); one that fails resumes after a backoff with jitter
//   (started over when the failed watch had delivered something);
//   410 Gone lists again and hands handlers the differences (adds, updates, deletes);
// - a watchdog restarts a watch that has delivered nothing for too long;
// - time comes from an injected Timers.
import {
  type ApiError,
  getPath,
  type InformerHandler,
  isApiError,
  type Kind,
  type KindMap,
  type KubeObject,
  type LabelSelector,
  type ListOptions,
  type ListWatcher,
  type Logger,
  matchesSelector,
  type ObjectKey,
  type ObjectList,
  type OldestFirstKey,
  type OldestFirstOptions,
  type OldestFirstPage,
  oldestFirstPage,
  parseSelector,
  type Timers,
  type WatchEvent,
} from '@claimkit/core';
import { fieldValues, IndexedStore, type IndexFunc, labelSetValues, labelValues } from './indexed-store.ts';
import { StringPool } from './string-pool.ts';
import { realTimers } from './timers.ts';

/** Where an informer reports what went wrong: core's Logger, or just these three of its methods. */
export type InformerLog = Pick<Logger, 'info' | 'warn' | 'error'>;

export interface InformerOptions {
  namespace?: string;
  labelSelector?: LabelSelector | string;
  /** Index these field paths (for field-selector lists on them, e.g. spec.podName). */
  indexFields?: readonly string[];
  /** Index these label keys (for equality label-selector lists on them, e.g. claimkit.dev/pool). */
  indexLabels?: readonly string[];
  /**
   * Index these combinations of label keys, each bucket kept oldest first: a list whose selector
   * sets all of a combination's keys reads just its bucket, and listOldestFirst pages through it
   * without touching the rest (e.g. [pool, state]: a pool's Idle pods, oldest first).
   */
  indexLabelSets?: readonly (readonly string[])[];
  /**
   * What the store keeps of each object, after managedFields are dropped (client-go's SetTransform):
   * fields nobody reads cost memory for every object cached. It must keep every field the readers
   * use, and return the same kind of object; it may return its input.
   */
  transform?: (obj: KubeObject) => KubeObject;
  /**
   * The pool each stored object's repeated strings go through (string-pool.ts): default the
   * informer's own (an InformerCache shares one among its informers); false for none.
   */
  strings?: StringPool | false;
  timers?: Timers;
  log?: InformerLog;
  /** Items per list page (default 500): a large namespace is never one huge response in memory. */
  pageSize?: number;
  /** Restart a watch that delivered nothing (events or bookmarks) for this long. Default 5 min. */
  watchdogMs?: number;
  /** Backoff after failures: initial and maximum delay (equal jitter). Defaults 500 ms and 30 s. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Server-side watch timeout range in seconds, randomised as client-go does. Default 5-10 min. */
  watchTimeoutSeconds?: [number, number];
  /**
   * By default start() fails when the first list fails for good (RBAC, CRDs missing, unreachable)
   * or the server stays busy (429/503/504) longer than startRetryMs. With retryFirstList the
   * informer retries every failure until it syncs or stops (a server that must come up regardless).
   */
  retryFirstList?: boolean;
  /** Default 60 s. */
  startRetryMs?: number;
  /** For tests: random in [0,1). */
  random?: () => number;
}

export interface InformerStats {
  /** Completed lists (each may be several pages). */
  lists: number;
  /** Lists caused by 410 Gone. */
  relists: number;
  watches: number;
  bookmarks: number;
  /** Watches the watchdog restarted. */
  watchdogRestarts: number;
  /** Failed lists and failed (not merely ended) watches. */
  failures: number;
}

/** The first list of an informer failed (RBAC, CRDs missing, cluster unreachable). */
export class InformerStartError extends Error {
  override readonly name = 'InformerStartError';
  readonly kind: Kind;
  override readonly cause: unknown;
  constructor(kind: Kind, cause: unknown) {
    super(`listing ${kind}: ${errorText(cause)}`);
    this.kind = kind;
    this.cause = cause;
  }
}

export const DEFAULT_PAGE_SIZE = 500;

/** The labels of an object without any (a selector's equalities then match nothing). */
const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

const fieldIndex = (field: string) => `field:${field}`;
const labelIndex = (key: string) => `label:${key}`;
const labelSetIndex = (keys: readonly string[]) => `labels:${keys.join(',')}`;

export class Informer<K extends Kind> {
  readonly kind: K;
  readonly stats: InformerStats = {
    lists: 0,
    relists: 0,
    watches: 0,
    bookmarks: 0,
    watchdogRestarts: 0,
    failures: 0,
  };
  private readonly source: ListWatcher;
  private readonly opts: InformerOptions;
  private readonly timers: Timers;
  private readonly strings: StringPool | undefined;
  private readonly store = new IndexedStore<KindMap[K]>();
  private readonly handlers = new Set<InformerHandler<KindMap[K]>>();
  private rv = '';
  private synced = false;
  private started = false;
  private stopped = false;
  private startedAt = 0;
  /** Bumped by every list and watch: callbacks of a superseded one are ignored. */
  private generation = 0;
  private stopWatch: (() => void) | undefined;
  private lastActivityAt = 0;
  private attempt = 0;
  private retryTimer: unknown;
  private watchdogTimer: unknown;
  private syncWaiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];

  constructor(source: ListWatcher, kind: K, opts: InformerOptions = {}) {
    this.source = source;
    this.kind = kind;
    this.opts = opts;
    this.timers = opts.timers ?? realTimers;
    this.strings = opts.strings === false ? undefined : (opts.strings ?? new StringPool());
    for (const f of opts.indexFields ?? []) this.indexField(f);
    for (const l of opts.indexLabels ?? []) this.store.addIndex(labelIndex(l), labelValues(l));
    for (const keys of opts.indexLabelSets ?? [])
      this.store.addIndex(labelSetIndex(keys), labelSetValues(keys), { ordered: true });
  }

  /** The label-set indexes every key of which `labels` sets: [index, value, keys]. */
  private labelSetsOf(labels: Record<string, string>): [string, string, readonly string[]][] {
    const out: [string, string, readonly string[]][] = [];
    for (const keys of this.opts.indexLabelSets ?? []) {
      if (keys.every((k) => labels[k] !== undefined))
        out.push([labelSetIndex(keys), keys.map((k) => labels[k]).join('\n'), keys]);
    }
    return out;
  }

  /**
   * Indexes `field` (controller-runtime's IndexField): lists with a field selector on it read the
   * index. By default the field's value at that path; `extract` may compute any values instead.
   */
  indexField(field: string, extract?: IndexFunc<KindMap[K]>): void {
    this.store.addIndex(fieldIndex(field), extract ?? fieldValues(field));
  }

  /** Registers handlers; objects already stored are replayed as adds. Returns an unregister. */
  addHandler(h: InformerHandler<KindMap[K]>): () => void {
    this.handlers.add(h);
    if (this.synced) for (const o of this.store.values()) this.call(() => h.onAdd?.(o));
    return () => this.handlers.delete(h);
  }

  /**
   * Lists and watches until stop(); resolves once the first list is stored. Rejects with an
   * InformerStartError when that list fails (see `retryFirstList`); the informer is stopped then.
   */
  start(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error(`informer ${this.kind}: stopped`));
    const synced = this.waitForSync();
    if (!this.started) {
      this.started = true;
      this.startedAt = this.timers.now();
      void this.listAndWatch();
      this.armWatchdog();
    }
    return synced;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.generation++;
    this.stopWatch?.();
    this.stopWatch = undefined;
    if (this.retryTimer !== undefined) this.timers.clearTimeout(this.retryTimer);
    if (this.watchdogTimer !== undefined) this.timers.clearTimeout(this.watchdogTimer);
    this.settleSync(new Error(`informer ${this.kind}: stopped before sync`));
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has been stored; rejects when `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error(`informer ${this.kind}: stopped before sync`));
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => reject(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push({
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
    });
  }

  /** The last resourceVersion seen (list, event or bookmark): where the next watch resumes. */
  get resourceVersion(): string {
    return this.rv;
  }

  get size(): number {
    return this.store.size;
  }

  /** The stored object (shared with the store: do not mutate). */
  get(key: ObjectKey): KindMap[K] | undefined {
    return this.store.get(key);
  }

  /** Stored objects, of one namespace or all (shared, the array frozen: do not mutate). */
  list(namespace?: string): KindMap[K][] {
    return this.listMatching(namespace === undefined ? {} : { namespace }) as KindMap[K][];
  }

  /**
   * Stored objects matching `opts` (namespace, label and field selectors), read through the
   * narrowest index that covers one of the requirements ("Idle pods of pool p" reads the Idle ones,
   * not the whole pool), else by a scan. Shared with the store: do not mutate (the array is
   * frozen, shared with other lists until the store changes).
   */
  listMatching(opts: ListOptions): readonly KindMap[K][] {
    // The claim gather asks this for every pod it looks at (who references the pod?): one indexed
    // field and nothing else is the index bucket itself, without building a plan.
    if (opts.labelSelector === undefined && opts.fieldSelector !== undefined) {
      const only = singleEntry(opts.fieldSelector);
      if (only && only[1] !== '') {
        const bucket = this.store.indexSnapshot(fieldIndex(only[0]), only[1], opts.namespace);
        if (bucket) return bucket;
      }
    }
    const fields = Object.entries(opts.fieldSelector ?? {});
    const sel =
      typeof opts.labelSelector === 'string' ? parseSelector(opts.labelSelector) : opts.labelSelector;
    const labels = Object.entries(sel?.matchLabels ?? {});
    // The namespace's objects unless an index holds fewer.
    let best: { index: string; value: string; n: number; keys?: readonly string[] } | undefined;
    let fewest = this.store.countIn(opts.namespace);
    for (const [index, value, keys] of [
      ...fields.map(([f, v]) => [fieldIndex(f), v, undefined] as const),
      ...labels.map(([l, v]) => [labelIndex(l), v, undefined] as const),
      ...this.labelSetsOf(sel?.matchLabels ?? {}),
    ]) {
      if (value === '') continue; // '' matches objects without the field, which no index holds
      const n = this.store.count(index, value, opts.namespace);
      if (n !== undefined && n < fewest) {
        best = { index, value, n, ...(keys ? { keys } : {}) };
        fewest = n;
      }
    }
    const candidates = best
      ? this.store.iterateIndex(best.index, best.value, opts.namespace)!
      : this.store.values(opts.namespace);
    // Each requirement is turned into a check once, not per object (this runs on every reconcile,
    // over thousands of pool pods): the namespace is the candidates' already, the requirement the
    // chosen index answered holds for all of them, label equalities compare directly, indexed field
    // requirements go through their index functions (which may compute values no path holds), the
    // rest as the API server would.
    const covered = best?.index;
    const labelChecks = labels.filter(([l]) => labelIndex(l) !== covered && !best?.keys?.includes(l));
    const expressions = sel?.matchExpressions?.length
      ? { matchExpressions: sel.matchExpressions }
      : undefined;
    const indexed = fields.filter(([f]) => this.store.hasIndex(fieldIndex(f)) && fieldIndex(f) !== covered);
    const plain = fields.filter(([f]) => !this.store.hasIndex(fieldIndex(f)));
    // Nothing left to check: the index bucket (or namespace) as it is, shared and frozen, no copy.
    if (labelChecks.length === 0 && !expressions && indexed.length === 0 && plain.length === 0)
      return best
        ? this.store.indexSnapshot(best.index, best.value, opts.namespace)!
        : this.store.snapshot(opts.namespace);
    const holds = (o: KindMap[K], field: string, value: string) => {
      const values = this.store.valuesOf(fieldIndex(field), o);
      return value === '' ? values.length === 0 : values.includes(value);
    };
    const out: KindMap[K][] = [];
    next: for (const o of candidates) {
      const l = o.metadata.labels ?? NO_LABELS;
      for (const [key, value] of labelChecks) if (l[key] !== value) continue next;
      if (expressions && !matchesSelector(l, expressions)) continue;
      for (const [f, v] of indexed) if (!holds(o, f, v)) continue next;
      for (const [path, want] of plain) {
        const got = getPath(o, path);
        if ((got === undefined || got === null ? '' : String(got)) !== want) continue next;
      }
      out.push(o);
    }
    return Object.freeze(out);
  }

  /**
   * An oldest-first page of the stored objects matching `opts` (api/oldest-first.ts). In a
   * namespace, with a label-set index whose keys the selector sets, it reads that bucket from
   * `opts.after` on: O(log n + what it returns), whatever the bucket holds. Otherwise it filters
   * everything matching, as any Reader does. Shared with the store: do not mutate.
   */
  listOldestFirst(opts: OldestFirstOptions): OldestFirstPage<KindMap[K]> {
    const sel =
      typeof opts.labelSelector === 'string' ? parseSelector(opts.labelSelector) : opts.labelSelector;
    const set = opts.namespace === undefined ? undefined : this.labelSetsOf(sel?.matchLabels ?? {})[0];
    if (opts.namespace === undefined || !set) {
      const list: ListOptions = {};
      if (opts.namespace !== undefined) list.namespace = opts.namespace;
      if (opts.labelSelector !== undefined) list.labelSelector = opts.labelSelector;
      return oldestFirstPage(this.listMatching(list), opts);
    }
    const [index, value, keys] = set;
    const rest = Object.entries(sel?.matchLabels ?? {}).filter(([k]) => !keys.includes(k));
    const expressions = sel?.matchExpressions?.length
      ? { matchExpressions: sel.matchExpressions }
      : undefined;
    const limit = Math.max(1, opts.limit);
    const page: OldestFirstPage<KindMap[K]> = { items: [] };
    let last: OldestFirstKey | undefined;
    next: for (const { key, obj } of this.store.oldestFirst(index, value, opts.namespace, opts.after)!) {
      const l = obj.metadata.labels ?? NO_LABELS;
      for (const [k, v] of rest) if (l[k] !== v) continue next;
      if (expressions && !matchesSelector(l, expressions)) continue;
      // One match past a full page says more follow (as oldestFirstPage says it).
      if (last && page.items.length === limit) {
        page.next = last;
        break;
      }
      page.items.push(obj);
      last = key;
    }
    return page;
  }

  // ---------------- list and watch ----------------

  private listOptions(): ListOptions {
    const o: ListOptions = {};
    if (this.opts.namespace) o.namespace = this.opts.namespace;
    if (this.opts.labelSelector !== undefined) o.labelSelector = this.opts.labelSelector;
    return o;
  }

  private async listAllPages(): Promise<ObjectList<KindMap[K]>> {
    const limit = this.opts.pageSize ?? DEFAULT_PAGE_SIZE;
    const items: KindMap[K][] = [];
    let page = await this.source.list(this.kind, { ...this.listOptions(), limit });
    // Every page is served from the first page's snapshot, whose version the watch resumes from.
    const resourceVersion = page.resourceVersion;
    for (;;) {
      for (const o of page.items) items.push(this.kept(o));
      if (!page.continue || this.stopped) break;
      page = await this.source.list(this.kind, { ...this.listOptions(), limit, continue: page.continue });
    }
    return { items, resourceVersion };
  }

  private async listAndWatch(): Promise<void> {
    const gen = ++this.generation;
    this.stopWatch?.();
    this.stopWatch = undefined;
    let list: ObjectList<KindMap[K]>;
    try {
      list = await this.listAllPages();
    } catch (e) {
      if (gen !== this.generation || this.stopped) return;
      this.stats.failures++;
      if (!this.synced && !this.mayRetryFirstList(e)) {
        const err = new InformerStartError(this.kind, e);
        this.settleSync(err);
        this.stop();
        return;
      }
      this.opts.log?.warn('list failed; retrying', { kind: this.kind, error: errorText(e) });
      this.retryAfter(this.backoff(e), () => void this.listAndWatch());
      return;
    }
    if (gen !== this.generation || this.stopped) return;
    this.stats.lists++;
    this.attempt = 0;
    this.replace(list);
    this.watch();
  }

  /** Before the first sync: "not now" answers are waited out for startRetryMs; the rest fail start(). */
  private mayRetryFirstList(e: unknown): boolean {
    if (this.opts.retryFirstList) return true;
    const answeredBusy = isApiError(e) && e.transient && e.code !== 0;
    return answeredBusy && this.timers.now() - this.startedAt < (this.opts.startRetryMs ?? 60_000);
  }

  private watch(): void {
    if (this.stopped) return;
    this.stopWatch?.();
    this.stopWatch = undefined;
    const gen = ++this.generation;
    this.stats.watches++;
    const startedAt = this.timers.now();
    this.lastActivityAt = startedAt;
    let delivered = 0;
    const [lo, hi] = this.opts.watchTimeoutSeconds ?? [300, 600];
    const stop = this.source.watch(
      this.kind,
      {
        ...this.listOptions(),
        resourceVersion: this.rv,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.floor(lo + (hi - lo) * this.random()),
      },
      {
        onEvent: (e) => {
          if (gen !== this.generation) return;
          delivered++;
          this.lastActivityAt = this.timers.now();
          this.apply(e);
        },
        onBookmark: (rv) => {
          if (gen !== this.generation) return;
          delivered++;
          this.lastActivityAt = this.timers.now();
          this.stats.bookmarks++;
          this.rv = rv;
        },
        onClose: (err) => {
          if (gen !== this.generation || this.stopped) return;
          this.generation++;
          this.stopWatch = undefined;
          this.watchEnded(err, delivered, startedAt);
        },
      },
    );
    if (gen === this.generation) this.stopWatch = stop;
  }

  private watchEnded(err: ApiError | undefined, delivered: number, startedAt: number): void {
    if (isApiError(err, 'Gone')) {
      // The resourceVersion is too old: list again at once (the server is answering).
      this.stats.relists++;
      this.opts.log?.info('watch expired; relisting', { kind: this.kind });
      void this.listAndWatch();
      return;
    }
    if (err) {
      this.stats.failures++;
      // A watch that streamed before it failed (a cut connection, a proxy's idle timeout) is not
      // a server refusing us: start the backoff over, as client-go resumes a watch cut by EOF at once.
      if (delivered > 0) this.attempt = 0;
      // 429 is the server asking to come back later (e.g. "storage is (re)initializing" right
      // after a CRD is established): expected, so not a warning.
      const log = isApiError(err, 'TooManyRequests') ? this.opts.log?.info : this.opts.log?.warn;
      log?.call(this.opts.log, 'watch failed; re-watching', { kind: this.kind, error: errorText(err) });
      this.retryAfter(this.backoff(err), () => this.watch());
      return;
    }
    // A normal end (server timeout, idle connection): resume at once, unless watches end at once.
    if (delivered === 0 && this.timers.now() - startedAt < 1000) {
      this.retryAfter(this.backoff(), () => this.watch());
      return;
    }
    this.attempt = 0;
    this.watch();
  }

  /** Checks when the watch would have been quiet for watchdogMs, so a dead one is found on time. */
  private armWatchdog(delay = this.opts.watchdogMs ?? 300_000): void {
    const period = this.opts.watchdogMs ?? 300_000;
    if (period <= 0) return;
    this.watchdogTimer = this.timers.setTimeout(() => {
      this.watchdogTimer = undefined;
      if (this.stopped) return;
      const quietFor = this.timers.now() - this.lastActivityAt;
      if (this.stopWatch && quietFor >= period) {
        this.stats.watchdogRestarts++;
        this.opts.log?.info('watch silent; restarting it', { kind: this.kind, resourceVersion: this.rv });
        this.watch();
        this.armWatchdog(period);
      } else {
        this.armWatchdog(this.stopWatch ? Math.max(1, period - quietFor) : period);
      }
    }, delay);
  }

  private random(): number {
    return (this.opts.random ?? Math.random)();
  }

  /** Equal jitter (at least half the delay, so a failing server is never hammered); honours Retry-After. */
  private backoff(e?: unknown): number {
    const initial = this.opts.backoffInitialMs ?? 500;
    const max = this.opts.backoffMaxMs ?? 30_000;
    const cap = Math.min(max, initial * 2 ** Math.min(this.attempt++, 20));
    const asked = isApiError(e) && e.retryAfterSeconds !== undefined ? e.retryAfterSeconds * 1000 : 0;
    return Math.max(asked, cap / 2 + (cap / 2) * this.random());
  }

  private retryAfter(ms: number, fn: () => void): void {
    if (this.stopped) return;
    if (this.retryTimer !== undefined) this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.stopped) fn();
    }, ms);
  }

  private settleSync(err?: unknown): void {
    for (const w of this.syncWaiters.splice(0)) {
      if (err === undefined) w.resolve();
      else w.reject(err);
    }
  }

  // ---------------- store and handlers ----------------

  /** The part of `o` the store keeps: without managedFields, then through the transform if any. */
  private kept(o: KindMap[K]): KindMap[K] {
    const slimmed = slim(o);
    const kept = this.opts.transform ? (this.opts.transform(slimmed) as KindMap[K]) : slimmed;
    this.strings?.internObject(kept);
    return kept;
  }

  /** A list's content replaces the store; handlers get the differences. */
  private replace(list: ObjectList<KindMap[K]>): void {
    const seen = new Set<string>();
    for (const o of list.items) {
      seen.add(storeKey(o));
      this.upsert(o);
    }
    for (const o of [...this.store.values()]) {
      if (seen.has(storeKey(o))) continue;
      this.store.delete(keyOfObj(o));
      this.emit((h) => h.onDelete?.(o));
    }
    this.rv = list.resourceVersion;
    if (!this.synced) {
      this.synced = true;
      this.settleSync();
    }
  }

  private apply(e: WatchEvent<KindMap[K]>): void {
    const o = this.kept(e.object);
    if (o.metadata.resourceVersion) this.rv = o.metadata.resourceVersion;
    if (e.type !== 'DELETED') {
      this.upsert(o);
      return;
    }
    // A DELETED of an object never stored (it never matched) is nothing to this cache.
    if (this.store.delete(keyOfObj(o))) this.emit((h) => h.onDelete?.(o));
  }

  private upsert(o: KindMap[K]): void {
    const old = this.store.get(keyOfObj(o));
    // A relist repeating what is stored changes nothing.
    if (
      old &&
      old.metadata.resourceVersion === o.metadata.resourceVersion &&
      old.metadata.uid === o.metadata.uid
    )
      return;
    this.store.set(o);
    if (old) this.emit((h) => h.onUpdate?.(old, o));
    else this.emit((h) => h.onAdd?.(o));
  }

  private emit(fn: (h: InformerHandler<KindMap[K]>) => void): void {
    for (const h of this.handlers) this.call(() => fn(h));
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.opts.log?.error('event handler threw', { kind: this.kind, error: errorText(e) });
    }
  }
}

/** The one [key, value] of a record that has exactly one, else undefined. */
function singleEntry(r: Record<string, string>): [string, string] | undefined {
  let found: [string, string] | undefined;
  for (const k in r) {
    if (found) return undefined;
    found = [k, r[k]!];
  }
  return found;
}

function keyOfObj(o: { metadata: { namespace?: string; name: string } }): ObjectKey {
  return { namespace: o.metadata.namespace ?? '', name: o.metadata.name };
}

const storeKey = (o: { metadata: { namespace?: string; name: string } }): string =>
  `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/**
 * Nothing decides on managedFields; dropping them roughly halves what a cached pod costs.
 * (A rebuilt metadata object, not `delete`, which would leave it in slow dictionary mode.)
 */
function slim<T extends { metadata: object }>(obj: T): T {
  if ((obj.metadata as { managedFields?: unknown }).managedFields === undefined) return obj;
  const { managedFields: _drop, ...metadata } = obj.metadata as { managedFields?: unknown };
  return { ...obj, metadata } as T;
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
