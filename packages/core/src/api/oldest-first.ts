// Oldest-first pages of a list: the objects a list would return, ordered by (creationTimestamp,
// name, namespace), a bounded page at a time. A claim binds one of its pool's oldest Idle pods; a
// Reader that keeps its objects in that order (the kube informer cache) answers a page without
// touching the rest of the pool, and any other Reader answers through `listOldestFirst`'s fallback
// (one list, one pass), so every Reader gives the same pages.
import { type KubeObject, parseTimestamp } from './meta.ts';
import type { ListOptions, Reader } from './ports.ts';
import type { Kind, KindMap } from './types.ts';

/** An object's place in oldest-first order: creation time (ms, 0 when unset), then name, then namespace. */
export interface OldestFirstKey {
  createdMs: number;
  name: string;
  namespace: string;
}

export interface OldestFirstOptions {
  namespace?: string;
  labelSelector?: ListOptions['labelSelector'];
  /** At most this many items (at least 1). */
  limit: number;
  /** Start after this key (the previous page's `next`). */
  after?: OldestFirstKey;
}

export interface OldestFirstPage<T> {
  /** Oldest first; the objects may be shared with the Reader's store: do not mutate them. */
  items: T[];
  /** Set when more items may follow: pass it as `after` for the next page. */
  next?: OldestFirstKey;
}

/** An optional Reader capability (see the file comment); test for it with canListOldestFirst. */
export interface OldestFirstReader {
  listOldestFirst<K extends Kind>(kind: K, opts: OldestFirstOptions): Promise<OldestFirstPage<KindMap[K]>>;
}

export function canListOldestFirst(r: Reader): r is Reader & OldestFirstReader {
  return typeof (r as Partial<OldestFirstReader>).listOldestFirst === 'function';
}

export function oldestFirstKey(o: KubeObject): OldestFirstKey {
  return {
    createdMs: parseTimestamp(o.metadata.creationTimestamp) ?? 0,
    name: o.metadata.name,
    namespace: o.metadata.namespace ?? '',
  };
}

/** Negative when `a` comes first. Names compare by UTF-16 code units (as bind candidates always did). */
export function compareOldestFirst(a: OldestFirstKey, b: OldestFirstKey): number {
  if (a.createdMs !== b.createdMs) return a.createdMs < b.createdMs ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.namespace !== b.namespace) return a.namespace < b.namespace ? -1 : 1;
  return 0;
}

/**
 * The page `opts` asks for out of `items` (all of them matching already), in one pass that keeps
 * only the first `limit` after `opts.after` in order: no sort of the whole list.
 */
export function oldestFirstPage<T extends KubeObject>(
  items: Iterable<T>,
  opts: Pick<OldestFirstOptions, 'limit' | 'after'>,
): OldestFirstPage<T> {
  const limit = Math.max(1, opts.limit);
  const top: { o: T; k: OldestFirstKey }[] = [];
  let more = false;
  for (const o of items) {
    const k = oldestFirstKey(o);
    if (opts.after && compareOldestFirst(k, opts.after) <= 0) continue;
    if (top.length === limit && compareOldestFirst(k, top[limit - 1]!.k) >= 0) {
      more = true;
      continue;
    }
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareOldestFirst(k, top[mid]!.k) < 0) hi = mid;
      else lo = mid + 1;
    }
    top.splice(lo, 0, { o, k });
    if (top.length > limit) {
      top.pop();
      more = true;
    }
  }
  const page: OldestFirstPage<T> = { items: top.map((x) => x.o) };
  if (more) page.next = top[top.length - 1]!.k;
  return page;
}

/**
 * A page of `kind` oldest first, from `reader`'s own ordered answer when it has one, else from one
 * list of everything matching (the cost the caller had before: O(matching objects)).
 */
export async function listOldestFirst<K extends Kind>(
  reader: Reader,
  kind: K,
  opts: OldestFirstOptions,
): Promise<OldestFirstPage<KindMap[K]>> {
  if (canListOldestFirst(reader)) return reader.listOldestFirst(kind, opts);
  const list: ListOptions = {};
  if (opts.namespace !== undefined) list.namespace = opts.namespace;
  if (opts.labelSelector !== undefined) list.labelSelector = opts.labelSelector;
  const { items } = await reader.list(kind, list);
  return oldestFirstPage(items as (KindMap[K] & KubeObject)[], opts);
}
