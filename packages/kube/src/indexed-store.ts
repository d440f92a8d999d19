// An informer's store: objects by namespace/name, plus named indexes (controller-runtime's
// FieldIndexer: an index maps each object to the values it is found under). The reconcilers ask
// "pods labelled claimed-by=X" and "claims with spec.podName=P" on every pass; without an index each
// question scans the whole namespace (O(n²) over a resync).
import {
  compareOldestFirst,
  getPath,
  type KubeObject,
  keyString,
  type ObjectKey,
  type OldestFirstKey,
  oldestFirstKey,
} from '@claimkit/core';

/** The values an object is found under in one index (none: not in the index). */
export type IndexFunc<T> = (obj: T) => string[];

/** The index function of a field path: its value as a string; absent, null and '' are not indexed. */
export function fieldValues(path: string): IndexFunc<KubeObject> {
  return (o) => {
    const v = getPath(o, path);
    return v === undefined || v === null || v === '' ? [] : [String(v)];
  };
}

/** The index function of a label key. */
export function labelValues(key: string): IndexFunc<KubeObject> {
  return (o) => {
    const v = o.metadata.labels?.[key];
    return v === undefined ? [] : [v];
  };
}

/**
 * The index function of a combination of label keys: one value, the keys' values joined by a
 * newline (which no label value holds); objects without every key are not indexed.
 */
export function labelSetValues(keys: readonly string[]): IndexFunc<KubeObject> {
  return (o) => {
    const values: string[] = [];
    for (const k of keys) {
      const v = o.metadata.labels?.[k];
      if (v === undefined) return [];
      values.push(v);
    }
    return [values.join('\n')];
  };
}

const nsOf = (o: KubeObject): string => o.metadata.namespace ?? '';

const EMPTY: readonly never[] = Object.freeze([]);

/** An ordered index's bucket entry: the object and its place (kept, not recomputed per comparison). */
interface Ordered<T> {
  key: OldestFirstKey;
  obj: T;
}

/** Where `key` goes in `list` (the first entry after every one that is not after it). */
function upperBound<T>(list: readonly Ordered<T>[], key: OldestFirstKey): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareOldestFirst(key, list[mid]!.key) < 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export class IndexedStore<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  /** namespace -> name -> object: the index every namespaced read uses (controller-runtime has it too). */
  private readonly byNamespace = new Map<string, Map<string, T>>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index -> value -> its bucket (Bucket: one object, or namespace -> name -> object) */
  private readonly indexes = new Map<string, Map<string, Bucket<T>>>();
  /**
   * For ordered indexes, the same buckets kept oldest first (api/oldest-first.ts): an oldest-first
   * page of a bucket is a binary search and `limit` steps, however many objects the bucket holds.
   * Each change costs a binary search and an array move (a memmove, not a walk over objects).
   */
  private readonly ordered = new Map<string, Map<string, Map<string, Ordered<T>[]>>>();
  /**
   * Frozen arrays of a map's objects (all, a namespace's, an index bucket's), built on the first
   * read after the map changed: lists between changes share one array instead of copying each
   * time, and nobody can change the store through it.
   */
  private readonly frozen = new WeakMap<Map<string, T>, readonly T[]>();
  /** The same for one-object buckets; a stored object is replaced, never changed, so it is the key. */
  private readonly frozenSole = new WeakMap<T, readonly T[]>();

  get size(): number {
    return this.objects.size;
  }

  /**
   * Adds an index (built from what is stored already); a second index of that name is an error.
   * An `ordered` one also keeps each (value, namespace) bucket oldest first, for `oldestFirst`.
   */
  addIndex(name: string, fn: IndexFunc<T>, opts: { ordered?: boolean } = {}): void {
    if (this.indexers.has(name)) throw new Error(`index ${name} already exists`);
    this.indexers.set(name, fn);
    this.indexes.set(name, new Map());
    if (opts.ordered) this.ordered.set(name, new Map());
    for (const o of this.objects.values()) this.indexOne(name, fn, o);
  }

  hasIndex(name: string): boolean {
    return this.indexers.has(name);
  }

  /** The values `obj` is found under in index `name` (for filtering by an indexed requirement). */
  valuesOf(name: string, obj: T): string[] {
    return this.indexers.get(name)?.(obj) ?? [];
  }

  get(key: ObjectKey): T | undefined {
    return this.objects.get(keyString(key));
  }

  /** Stored objects, of one namespace or all. */
  values(namespace?: string): IterableIterator<T> {
    if (namespace === undefined) return this.objects.values();
    return (this.byNamespace.get(namespace) ?? new Map<string, T>()).values();
  }

  /** Stored objects, of one namespace or all, as a frozen array shared until the store changes. */
  snapshot(namespace?: string): readonly T[] {
    if (namespace === undefined) return this.frozenOf(this.objects);
    const inNs = this.byNamespace.get(namespace);
    return inNs ? this.frozenOf(inNs) : EMPTY;
  }

  /**
   * The objects index `name` holds under `value` in `namespace` as a frozen array shared until
   * that bucket changes (in all namespaces: a fresh frozen array); undefined when there is no such index.
   */
  indexSnapshot(name: string, value: string, namespace?: string): readonly T[] | undefined {
    const byValue = this.indexes.get(name);
    if (!byValue) return undefined;
    const bucket = byValue.get(value);
    if (!bucket) return EMPTY;
    if (!(bucket instanceof Map)) return inNamespace(bucket, namespace) ? this.frozenOfSole(bucket) : EMPTY;
    if (namespace !== undefined) {
      const m = bucket.get(namespace);
      return m ? this.frozenOf(m) : EMPTY;
    }
    return Object.freeze(this.byIndex(name, value) ?? []);
  }

  private frozenOfSole(o: T): readonly T[] {
    let a = this.frozenSole.get(o);
    if (!a) {
      a = Object.freeze([o]);
      this.frozenSole.set(o, a);
    }
    return a;
  }

  private frozenOf(m: Map<string, T>): readonly T[] {
    let a = this.frozen.get(m);
    if (!a) {
      a = Object.freeze([...m.values()]);
      this.frozen.set(m, a);
    }
    return a;
  }

  /** How many objects `namespace` holds (all namespaces when undefined). */
  countIn(namespace?: string): number {
    return namespace === undefined ? this.objects.size : (this.byNamespace.get(namespace)?.size ?? 0);
  }

  /** Stores `obj` (replacing one of the same namespace/name); returns the one replaced. */
  set(obj: T): T | undefined {
    const k = keyString({ namespace: nsOf(obj), name: obj.metadata.name });
    const old = this.objects.get(k);
    if (old) this.unindex(old);
    this.objects.set(k, obj);
    this.frozen.delete(this.objects);
    let inNs = this.byNamespace.get(nsOf(obj));
    if (!inNs) {
      inNs = new Map();
      this.byNamespace.set(nsOf(obj), inNs);
    }
    inNs.set(obj.metadata.name, obj);
    this.frozen.delete(inNs);
    for (const [name, fn] of this.indexers) this.indexOne(name, fn, obj);
    return old;
  }

  /** Removes the object stored under `key`; returns it. */
  delete(key: ObjectKey): T | undefined {
    const k = keyString(key);
    const old = this.objects.get(k);
    if (!old) return undefined;
    this.unindex(old);
    this.objects.delete(k);
    this.frozen.delete(this.objects);
    const inNs = this.byNamespace.get(nsOf(old));
    inNs?.delete(old.metadata.name);
    if (inNs) this.frozen.delete(inNs);
    if (inNs?.size === 0) this.byNamespace.delete(nsOf(old));
    return old;
  }

  /**
   * How many objects index `name` holds under `value` (in `namespace`, or in all namespaces);
   * undefined when there is no such index.
   */
  count(name: string, value: string, namespace?: string): number | undefined {
    const byValue = this.indexes.get(name);
    if (!byValue) return undefined;
    const bucket = byValue.get(value);
    if (!bucket) return 0;
    if (!(bucket instanceof Map)) return inNamespace(bucket, namespace) ? 1 : 0;
    if (namespace !== undefined) return bucket.get(namespace)?.size ?? 0;
    let n = 0;
    for (const m of bucket.values()) n += m.size;
    return n;
  }

  /**
   * The objects index `name` holds under `value`, without copying them into an array (for a caller
   * that filters them); undefined when there is no such index. Do not change the store meanwhile.
   */
  iterateIndex(name: string, value: string, namespace?: string): Iterable<T> | undefined {
    const byValue = this.indexes.get(name);
    if (!byValue) return undefined;
    const bucket = byValue.get(value);
    if (!bucket) return [];
    if (!(bucket instanceof Map)) return inNamespace(bucket, namespace) ? [bucket] : [];
    if (namespace !== undefined) return bucket.get(namespace)?.values() ?? [];
    return (function* () {
      for (const m of bucket.values()) yield* m.values();
    })();
  }

  /** Whether index `name` exists and keeps its buckets oldest first. */
  isOrdered(name: string): boolean {
    return this.ordered.has(name);
  }

  /**
   * The objects ordered index `name` holds under `value` in `namespace`, oldest first, starting
   * after `after`; undefined when there is no such ordered index. Read it before the store changes.
   */
  oldestFirst(
    name: string,
    value: string,
    namespace: string,
    after?: OldestFirstKey,
  ): Iterable<{ key: OldestFirstKey; obj: T }> | undefined {
    const byValue = this.ordered.get(name);
    if (!byValue) return undefined;
    const list = byValue.get(value)?.get(namespace);
    if (!list) return [];
    const from = after ? upperBound(list, after) : 0;
    return (function* () {
      for (let i = from; i < list.length; i++) yield list[i]!;
    })();
  }

  /** The objects index `name` holds under `value`; undefined when there is no such index. */
  byIndex(name: string, value: string, namespace?: string): T[] | undefined {
    const byValue = this.indexes.get(name);
    if (!byValue) return undefined;
    const bucket = byValue.get(value);
    if (!bucket) return [];
    if (!(bucket instanceof Map)) return inNamespace(bucket, namespace) ? [bucket] : [];
    if (namespace !== undefined) return [...(bucket.get(namespace)?.values() ?? [])];
    const out: T[] = [];
    for (const m of bucket.values()) for (const o of m.values()) out.push(o);
    return out;
  }

  private indexOne(name: string, fn: IndexFunc<T>, o: T): void {
    const byValue = this.indexes.get(name)!;
    const ordered = this.ordered.get(name);
    for (const v of new Set(fn(o))) {
      if (ordered) insertOrdered(ordered, v, nsOf(o), o);
      const bucket = byValue.get(v);
      if (bucket === undefined) byValue.set(v, o);
      else if (bucket instanceof Map) this.addToBucket(bucket, o);
      else {
        // A second object under this value: the bucket becomes namespace -> name -> object.
        const promoted: BucketMap<T> = new Map();
        this.addToBucket(promoted, bucket);
        this.addToBucket(promoted, o);
        byValue.set(v, promoted);
      }
    }
  }

  private addToBucket(bucket: BucketMap<T>, o: T): void {
    const ns = nsOf(o);
    let byName = bucket.get(ns);
    if (!byName) {
      byName = new Map();
      bucket.set(ns, byName);
    }
    byName.set(o.metadata.name, o);
    this.frozen.delete(byName);
  }

  private unindex(o: T): void {
    const ns = nsOf(o);
    for (const [name, fn] of this.indexers) {
      const byValue = this.indexes.get(name)!;
      const ordered = this.ordered.get(name);
      for (const v of new Set(fn(o))) {
        if (ordered) removeOrdered(ordered, v, ns, o);
        const bucket = byValue.get(v);
        if (bucket === undefined) continue;
        if (!(bucket instanceof Map)) {
          if (sameKey(bucket, o)) byValue.delete(v);
          continue;
        }
        const byName = bucket.get(ns);
        byName?.delete(o.metadata.name);
        if (byName) this.frozen.delete(byName);
        if (byName && byName.size === 0) bucket.delete(ns);
        const only = soleObject(bucket);
        if (bucket.size === 0) byValue.delete(v);
        else if (only) byValue.set(v, only);
      }
    }
  }
}

/**
 * One value's objects in an index. Most values are held by one object (a pod's claimed-by, a
 * claim's spec.podName): such a bucket is that object, not two one-entry maps (~350 bytes each at
 * 10,000 claims and their pods); a second object makes it namespace -> name -> object, and it
 * goes back to the object when one is left.
 */
type Bucket<T> = T | BucketMap<T>;
type BucketMap<T> = Map<string, Map<string, T>>;

const sameKey = (a: KubeObject, b: KubeObject): boolean =>
  a.metadata.name === b.metadata.name && nsOf(a) === nsOf(b);

const inNamespace = (o: KubeObject, namespace: string | undefined): boolean =>
  namespace === undefined || nsOf(o) === namespace;

/** The bucket's object when it holds exactly one. */
function soleObject<T>(bucket: BucketMap<T>): T | undefined {
  if (bucket.size !== 1) return undefined;
  const [byName] = bucket.values();
  if (byName!.size !== 1) return undefined;
  const [o] = byName!.values();
  return o;
}

function insertOrdered<T extends KubeObject>(
  byValue: Map<string, Map<string, Ordered<T>[]>>,
  value: string,
  ns: string,
  obj: T,
): void {
  let byNs = byValue.get(value);
  if (!byNs) {
    byNs = new Map();
    byValue.set(value, byNs);
  }
  let list = byNs.get(ns);
  if (!list) {
    list = [];
    byNs.set(ns, list);
  }
  const key = oldestFirstKey(obj);
  list.splice(upperBound(list, key), 0, { key, obj });
}

function removeOrdered<T extends KubeObject>(
  byValue: Map<string, Map<string, Ordered<T>[]>>,
  value: string,
  ns: string,
  obj: T,
): void {
  const byNs = byValue.get(value);
  const list = byNs?.get(ns);
  if (!byNs || !list) return;
  // The stored object is the one indexed: its key finds it (names are unique in a namespace).
  const key = oldestFirstKey(obj);
  let i = upperBound(list, key) - 1;
  while (i >= 0 && list[i]!.obj !== obj && compareOldestFirst(list[i]!.key, key) === 0) i--;
  if (i < 0 || list[i]!.obj !== obj) return;
  list.splice(i, 1);
  if (list.length === 0) byNs.delete(ns);
  if (byNs.size === 0) byValue.delete(value);
}
