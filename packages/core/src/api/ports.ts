// The narrow ports every claim algorithm talks through (controller-runtime's Reader / Writer /
// StatusWriter, and a Watcher that says how a watch ended). The in-memory model implements them for
// tests and the simulator; @claimkit/kube implements them over @kubernetes/client-node.
import type { ApiError } from './errors.ts';
import type { LabelSelector, ObjectKey } from './meta.ts';
import type { AnyObject, Kind, KindMap } from './types.ts';

export interface ListOptions {
  namespace?: string;
  /** A structured selector or its string form (`a=b,c!=d,e in (f),!g`). */
  labelSelector?: LabelSelector | string;
  /** Equality-only field selector, e.g. `{ 'spec.nodeName': 'n1' }`. */
  fieldSelector?: Record<string, string>;
  /** Page size: at most this many items; `continue` in the answer fetches the next page. */
  limit?: number;
  /** The `continue` token of the previous page. */
  continue?: string;
}

export interface ObjectList<T> {
  /** A cache may hand out a frozen array shared with its other readers: copy it before changing it. */
  items: T[];
  resourceVersion: string;
  /** Set when more items remain (a paged list): pass it as `continue` for the next page. */
  continue?: string;
}

export interface Reader {
  get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]>;
  list<K extends Kind>(kind: K, opts?: ListOptions): Promise<ObjectList<KindMap[K]>>;
}

export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface DeleteOptions {
  preconditions?: DeletePreconditions;
  gracePeriodSeconds?: number;
}

/** A JSON merge patch (RFC 7386); `null` removes a field. */
export type MergePatch = { [field: string]: unknown };

export interface PatchOptions {
  /** Optimistic concurrency: fail with Conflict unless the object is still at this version. */
  resourceVersion?: string;
  /** Optimistic concurrency on identity: fail with Conflict unless the object still has this UID. */
  uid?: string;
}

export interface Writer {
  create<T extends AnyObject>(obj: T): Promise<T>;
  /** Replace; `metadata.resourceVersion` is the precondition (Conflict when stale). */
  update<T extends AnyObject>(obj: T): Promise<T>;
  patch<K extends Kind>(kind: K, key: ObjectKey, patch: MergePatch, opts?: PatchOptions): Promise<KindMap[K]>;
  /** Returns the object when it is kept (finalizers: deletionTimestamp set), undefined when gone. */
  delete<K extends Kind>(kind: K, key: ObjectKey, opts?: DeleteOptions): Promise<KindMap[K] | undefined>;
}

export interface StatusWriter {
  updateStatus<T extends AnyObject>(obj: T): Promise<T>;
  patchStatus<K extends Kind>(
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts?: PatchOptions,
  ): Promise<KindMap[K]>;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions {
  namespace?: string;
  /** A structured selector or its string form, as for list. */
  labelSelector?: LabelSelector | string;
  /** Equality-only field selector, as for list. */
  fieldSelector?: Record<string, string>;
  /**
   * Stream changes after this version. Unset or "0": first a synthetic ADDED event for every object
   * that exists, then changes (as the API server does).
   */
  resourceVersion?: string;
  /** Ask for BOOKMARK events: "everything up to this resourceVersion has been delivered". */
  allowWatchBookmarks?: boolean;
  /**
   * Ask the server to end the watch after about this long (onClose without an error); informers
   * spread these so watches rebalance across API servers. The in-memory model has no such timer.
   */
  timeoutSeconds?: number;
}

export interface WatchHandlers<T> {
  onEvent(e: WatchEvent<T>): void;
  /** A BOOKMARK: nothing matching the watch changed up to `resourceVersion`; resume from there. */
  onBookmark?(resourceVersion: string): void;
  /**
   * The watch ended on the server's side, exactly once, and never after stop(). Without an error it
   * ended normally (a server timeout, an idle connection closed): watch again from the last
   * resourceVersion seen. With ApiError `Gone` (410) that version is too old: list again. Any other
   * error: the watch failed (403, 5xx, connection lost); watch again after a backoff.
   */
  onClose?(error?: ApiError): void;
}

export interface Watcher {
  /**
   * Streams changes of `kind` to `handlers` until it ends (onClose) or the returned function stops
   * it; after stop() no handler is called. Failures never throw: they arrive through onClose.
   */
  watch<K extends Kind>(kind: K, opts: WatchOptions, handlers: WatchHandlers<KindMap[K]>): () => void;
}

/** What an informer needs: list (with paging) and watch. */
export interface ListWatcher extends Watcher {
  list<K extends Kind>(kind: K, opts?: ListOptions): Promise<ObjectList<KindMap[K]>>;
}

/**
 * Time as a port: informers, work queues and electors take it as an argument, so unit tests drive
 * them with FakeTimers (`@claimkit/core/testing`) and processes use real ones (`@claimkit/kube`).
 */
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface Client extends Reader, Writer, StatusWriter {}

/** An informer's event handler, as @claimkit/kube's Informer and the simulator's CacheView call it. */
export interface InformerHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** The object's last state: the watch's DELETED object, or the stored one when a relist found it gone. */
  onDelete?(obj: T): void;
}
