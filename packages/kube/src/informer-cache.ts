// Informers by kind, and core's Reader over their stores (controller-runtime's cache.Cache with its
// FieldIndexer): reconcilers read through it, so a pass costs no API request. Reads are shared with
// the stores (no copies, they are the hot path): callers must not mutate what they read.
import {
  ApiError,
  KIND_INFO,
  type Kind,
  type KindMap,
  type KubeObject,
  type LabelSelector,
  type ListOptions,
  type ListWatcher,
  type ObjectKey,
  type ObjectList,
  type OldestFirstOptions,
  type OldestFirstPage,
  type OldestFirstReader,
  oldestFirstPage,
  type Reader,
} from '@claimkit/core';
import type { IndexFunc } from './indexed-store.ts';
import { Informer, type InformerOptions } from './informer.ts';
import { StringPool } from './string-pool.ts';

export interface InformerCacheOptions
  extends Omit<
    InformerOptions,
    'labelSelector' | 'indexFields' | 'indexLabels' | 'indexLabelSets' | 'transform'
  > {
  /** Kinds without an informer are read from here (live); without it, reading one is an error. */
  live?: Reader;
}

export interface InformerKindOptions {
  /** A cluster-scoped kind (Node): watched across the cluster whatever namespace the cache watches. */
  clusterScoped?: boolean;
  labelSelector?: LabelSelector | string;
  indexFields?: readonly string[];
  indexLabels?: readonly string[];
  /** Label-key combinations indexed oldest first (InformerOptions.indexLabelSets). */
  indexLabelSets?: readonly (readonly string[])[];
  /** What the store keeps of each object (InformerOptions.transform). */
  transform?: (obj: KubeObject) => KubeObject;
}

export class InformerCache implements Reader, OldestFirstReader {
  private readonly source: ListWatcher;
  private readonly opts: InformerCacheOptions;
  private readonly byKind = new Map<Kind, Informer<Kind>>();
  /** One pool for every kind: pods and claims repeat the same namespaces, pools and labels. */
  private readonly strings: StringPool | false;
  private started = false;

  constructor(source: ListWatcher, opts: InformerCacheOptions = {}) {
    this.source = source;
    this.opts = opts;
    this.strings = opts.strings ?? new StringPool();
  }

  /** The informer of `kind`, created on first use (`opts` apply then; later calls return it as is). */
  informerFor<K extends Kind>(kind: K, opts: InformerKindOptions = {}): Informer<K> {
    let inf = this.byKind.get(kind) as Informer<K> | undefined;
    if (!inf) {
      const { live: _live, namespace, ...common } = this.opts;
      const { clusterScoped, ...kindOpts } = opts;
      const ns = clusterScoped || namespace === undefined ? {} : { namespace };
      inf = new Informer(this.source, kind, { ...common, ...ns, ...kindOpts, strings: this.strings });
      this.byKind.set(kind, inf as unknown as Informer<Kind>);
      if (this.started) {
        inf
          .start()
          .catch((e: unknown) =>
            this.opts.log?.error('informer failed to start', { kind, error: String(e) }),
          );
      }
    }
    return inf;
  }

  informer<K extends Kind>(kind: K): Informer<K> | undefined {
    return this.byKind.get(kind) as Informer<K> | undefined;
  }

  informers(): Informer<Kind>[] {
    return [...this.byKind.values()];
  }

  /** controller-runtime's IndexField: lists of `kind` with a field selector on `field` read an index. */
  indexField<K extends Kind>(kind: K, field: string, extract?: IndexFunc<KindMap[K]>): void {
    this.informerFor(kind).indexField(field, extract);
  }

  /**
   * Starts every informer; resolves when all have synced. When one fails to start (its
   * InformerStartError names the kind) every informer is stopped and the error is thrown.
   */
  async start(): Promise<void> {
    this.started = true;
    try {
      await Promise.all(this.informers().map((i) => i.start()));
    } catch (e) {
      this.stop();
      throw e;
    }
  }

  stop(): void {
    for (const i of this.byKind.values()) i.stop();
  }

  hasSynced(): boolean {
    return this.informers().every((i) => i.hasSynced());
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.informers().map((i) => i.waitForSync(signal)));
  }

  async get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]> {
    const inf = this.byKind.get(kind) as Informer<K> | undefined;
    if (!inf) return this.liveReader(kind).get(kind, key);
    const o = inf.get(key);
    if (!o) throw new ApiError('NotFound', `${KIND_INFO[kind].plural} "${key.name}" not found (cache)`);
    return o;
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    const inf = this.byKind.get(kind) as Informer<K> | undefined;
    if (!inf) return this.liveReader(kind).list(kind, opts);
    // A frozen array shared with the store's other readers (ObjectList.items): copy it to change it.
    return { items: inf.listMatching(opts) as KindMap[K][], resourceVersion: inf.resourceVersion };
  }

  /** Oldest-first pages (api/oldest-first.ts) from the informer's ordered index when it has one. */
  async listOldestFirst<K extends Kind>(
    kind: K,
    opts: OldestFirstOptions,
  ): Promise<OldestFirstPage<KindMap[K]>> {
    const inf = this.byKind.get(kind) as Informer<K> | undefined;
    if (inf) return inf.listOldestFirst(opts);
    const list: ListOptions = {};
    if (opts.namespace !== undefined) list.namespace = opts.namespace;
    if (opts.labelSelector !== undefined) list.labelSelector = opts.labelSelector;
    const { items } = await this.liveReader(kind).list(kind, list);
    return oldestFirstPage(items, opts);
  }

  private liveReader(kind: Kind): Reader {
    if (this.opts.live) return this.opts.live;
    throw new Error(`InformerCache: no informer for ${kind} (register it with informerFor first)`);
  }
}
