// The narrow ports every claim algorithm talks through (controller-runtime's Reader / Writer /
// StatusWriter). The in-memory model implements them for tests and the simulator; the controller
// and the CLI implement them over @kubernetes/client-node.
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

export interface Watcher {
  /**
   * Streams events after `resourceVersion`; throws ApiError Gone (410) when that version is too
   * old, so the caller relists. Returns a function that stops the watch.
   */
  watch<K extends Kind>(
    kind: K,
    opts: ListOptions & { resourceVersion?: string },
    onEvent: (e: WatchEvent<KindMap[K]>) => void,
  ): () => void;
}

export interface Client extends Reader, Writer, StatusWriter {}
