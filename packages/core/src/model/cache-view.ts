// What a controller replica's informer cache would serve, built on the in-memory model: the model's
// state `lag` events ago, relisted when the model's event window no longer reaches back that far.
// `kindLag` holds one kind's events back further (one informer behind the others: a pod watch under
// load behind the claim watch), so the cache can show a claim's write before the pod write before it.
import { ApiError } from '../api/errors.ts';
import { clone } from '../api/json.ts';
import { matchesList } from '../api/list-match.ts';
import { type KubeObject, keyString, type ObjectKey } from '../api/meta.ts';
import type { OldestFirstOptions, OldestFirstPage } from '../api/oldest-first.ts';
import type { InformerHandler, ListOptions, ObjectList, Reader } from '../api/ports.ts';
import { KIND_INFO, type Kind, type KindMap } from '../api/types.ts';
import { type ApiModel, keyOfObj, type ModelEvent, pageOf } from './api-model.ts';

type Obj = KubeObject & { [field: string]: unknown };

/** A Reader that serves what an informer cache would: the model's state `lag` events ago. */
export class CacheView implements Reader {
  private readonly store = new Map<Kind, Map<string, Obj>>();
  private appliedRv = 0;
  lag: number;
  /**
   * Events of these kinds are applied only once this many more events (of any kind) have been
   * applied after them; a kind's own events stay in order. Lowered, they apply on the next read.
   */
  kindLag: Partial<Record<Kind, number>> = {};
  /** Events held back by kindLag, in order, with the count of events taken before each. */
  private readonly held: { e: ModelEvent; at: number }[] = [];
  private taken = 0;
  /** Called as the view's store changes, as an informer's handlers (a relist reports what it changed). */
  private readonly handlers = new Map<Kind, InformerHandler<KubeObject>[]>();
  /** What the view keeps of each object, as an informer's transform (the controller's pods: api/pod-fields.ts). */
  private readonly transform: ((o: KubeObject) => KubeObject) | undefined;

  private readonly model: ApiModel;

  constructor(model: ApiModel, lag = 0, transform?: (o: KubeObject) => KubeObject) {
    this.model = model;
    this.lag = lag;
    this.transform = transform;
    this.relist();
  }

  /** Handlers of one kind's changes (the process memory's pod handler, expectations in tests). */
  addHandler<K extends Kind>(kind: K, handler: InformerHandler<KindMap[K]>): void {
    const h = handler as unknown as InformerHandler<KubeObject>;
    this.handlers.set(kind, [...(this.handlers.get(kind) ?? []), h]);
    // As client-go's AddEventHandler on a synced informer: what the store holds arrives as adds.
    for (const o of this.store.get(kind)?.values() ?? []) h.onAdd?.(o);
  }

  private relist(): void {
    const before = new Map(this.store);
    this.store.clear();
    this.held.length = 0;
    const snap = this.model.snapshot();
    for (const kind of Object.keys(snap) as Kind[]) {
      const b = new Map<string, Obj>();
      for (const o of snap[kind]) b.set(keyString(keyOfObj(o)), this.kept(o) as unknown as Obj);
      this.store.set(kind, b);
    }
    this.appliedRv = Number(this.model.resourceVersion);
    // As an informer's relist: what changed is reported, what is gone is deleted with its last state.
    for (const [kind, hs] of this.handlers) {
      const old = before.get(kind) ?? new Map<string, Obj>();
      const now = this.store.get(kind) ?? new Map<string, Obj>();
      for (const [k, o] of old) if (!now.has(k)) for (const h of hs) h.onDelete?.(o);
      for (const [k, o] of now) {
        const was = old.get(k);
        for (const h of hs) {
          if (!was) h.onAdd?.(o);
          else if (was.metadata.resourceVersion !== o.metadata.resourceVersion) h.onUpdate?.(was, o);
        }
      }
    }
  }

  /** Applies events up to `lag` behind the head. */
  sync(): void {
    const { events, complete } = this.model.eventsSince(this.appliedRv);
    if (!complete) {
      this.relist();
      return;
    }
    const upto = events.length - this.lag;
    for (let i = 0; i < upto; i++) {
      const e = events[i]!;
      this.appliedRv = e.rv;
      this.taken++;
      if ((this.kindLag[e.kind] ?? 0) > 0 || this.held.some((h) => h.e.kind === e.kind))
        this.held.push({ e, at: this.taken });
      else this.apply(e);
      this.release();
    }
    this.release();
  }

  /** Applies the held events whose kind's lag has passed (in order; a kind never overtakes itself). */
  private release(): void {
    for (let i = 0; i < this.held.length; ) {
      const { e, at } = this.held[i]!;
      const due = this.taken - at >= (this.kindLag[e.kind] ?? 0);
      if (due && !this.held.slice(0, i).some((h) => h.e.kind === e.kind)) {
        this.held.splice(i, 1);
        this.apply(e);
      } else i++;
    }
  }

  private apply(e: ModelEvent): void {
    let b = this.store.get(e.kind);
    if (!b) {
      b = new Map();
      this.store.set(e.kind, b);
    }
    const k = keyString(keyOfObj(e.object));
    const hs = this.handlers.get(e.kind) ?? [];
    if (e.type === 'DELETED') {
      b.delete(k);
      // The watch's DELETED object, as the informer hands it on.
      const last = this.kept(clone(e.object));
      for (const h of hs) h.onDelete?.(last);
      return;
    }
    const was = b.get(k);
    const o = this.kept(clone(e.object)) as unknown as Obj;
    b.set(k, o);
    for (const h of hs) {
      if (was) h.onUpdate?.(was, o);
      else h.onAdd?.(o);
    }
  }

  private kept(o: KubeObject): KubeObject {
    return this.transform ? this.transform(o) : o;
  }

  /** What the cache holds now, without taking in due events (an event handler's synchronous read). */
  current<K extends Kind>(kind: K, key: ObjectKey): Readonly<KindMap[K]> | undefined {
    return this.store.get(kind)?.get(keyString(key)) as unknown as KindMap[K] | undefined;
  }

  async get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]> {
    this.sync();
    const o = this.store.get(kind)?.get(keyString(key));
    if (!o) throw new ApiError('NotFound', `${KIND_INFO[kind].plural} "${key.name}" not found (cache)`);
    return clone(o) as unknown as KindMap[K];
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    this.sync();
    const items: KindMap[K][] = [];
    for (const o of this.store.get(kind)?.values() ?? []) {
      if (matchesList(o, opts)) items.push(clone(o) as unknown as KindMap[K]);
    }
    items.sort((a, b) => keyString(keyOfObj(a)).localeCompare(keyString(keyOfObj(b))));
    // Frozen as the informer cache's are (ports.ts): a reconciler that changes a list it read from
    // a cache fails here, in the simulator, not only against the real cache.
    return { items: Object.freeze(items) as KindMap[K][], resourceVersion: String(this.appliedRv) };
  }

  /** The optional oldest-first capability (api/oldest-first.ts), as the informer cache has it. */
  async listOldestFirst<K extends Kind>(
    kind: K,
    opts: OldestFirstOptions,
  ): Promise<OldestFirstPage<KindMap[K]>> {
    this.sync();
    return pageOf<KindMap[K]>(this.store.get(kind)?.values() ?? [], opts);
  }
}
