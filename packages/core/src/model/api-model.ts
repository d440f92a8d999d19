// An in-memory model of kube-apiserver behaviour for the kinds claimkit uses. It really stores
// objects: every accepted write persists, bumps resourceVersion and is visible to later reads and
// watches. Conformance tests run the same cases against this model and a real API server.
import { ApiError, type FieldCause } from '../api/errors.ts';
import { applyMergePatch, clone, deepEqual } from '../api/json.ts';
import { matchesList } from '../api/list-match.ts';
import { type KubeObject, keyString, type ObjectKey, toSecondsTimestamp, toTimestamp } from '../api/meta.ts';
import { type OldestFirstOptions, type OldestFirstPage, oldestFirstPage } from '../api/oldest-first.ts';
import type {
  Client,
  DeleteOptions,
  ListOptions,
  MergePatch,
  ObjectList,
  PatchOptions,
  WatchEvent,
  WatchEventType,
  Watcher,
  WatchHandlers,
  WatchOptions,
} from '../api/ports.ts';
import {
  type AnyObject,
  KIND_INFO,
  type Kind,
  type KindMap,
  type Scale,
  type ScalePaths,
} from '../api/types.ts';
import type { RequestVerb } from '../api/verbs.ts';
import {
  type AdmissionCheck,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionStore,
  admissionError,
  CONTROLLER_USER,
  type UserInfo,
} from './admission.ts';
import { type Clock, ManualClock, Rng } from './clock.ts';
import { FaultInjector } from './faults.ts';

type Obj = KubeObject & { [field: string]: unknown };

export interface ModelEvent {
  rv: number;
  kind: Kind;
  type: WatchEventType;
  object: Obj;
}

export interface ApiModelOptions {
  clock?: Clock;
  seed?: number;
  /**
   * Per-kind defaulting and validation, e.g. from the CRD schemas (`schemaModelOptions()`). Both run
   * on every write, status writes included, as the API server's do. Validators get the stored
   * object as `old` on updates, for transition rules such as `self == oldSelf`.
   */
  defaulters?: Partial<Record<Kind, (obj: Obj) => void>>;
  validators?: Partial<Record<Kind, (obj: Obj, old?: Obj) => FieldCause[]>>;
  /**
   * Validating admission after schema validation, in order (ValidatingAdmissionPolicies, webhooks):
   * the first denial refuses the write. Every write runs through them, DELETE included.
   */
  admission?: AdmissionCheck[];
  /** How many events watches can resume from before answering 410 Gone. */
  eventWindow?: number;
}

interface ModelWatch {
  kind: Kind;
  opts: WatchOptions;
  handlers: WatchHandlers<Obj>;
  /** Set while the watch replays: live events wait here, behind the replay. */
  queued?: WatchEvent<Obj>[];
}

/** The current request: who makes it, and what admission sees of it. */
interface Req {
  user: UserInfo;
  operation: AdmissionOperation;
  subresource?: 'status' | 'scale';
}

/** Every write the model accepted, for tests that count API writes. */
export interface WriteRecord {
  verb: RequestVerb;
  kind: Kind;
  name: string;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export class ApiModel implements Client, Watcher {
  readonly clock: Clock;
  readonly rng: Rng;
  readonly faults: FaultInjector;
  readonly writes: WriteRecord[] = [];
  private readonly store = new Map<Kind, Map<string, Obj>>();
  private rv = 1;
  private uidCounter = 0;
  private readonly events: ModelEvent[] = [];
  private readonly eventWindow: number;
  private readonly watchers = new Set<ModelWatch>();
  private readonly opts: ApiModelOptions;

  constructor(opts: ApiModelOptions = {}) {
    this.opts = opts;
    this.clock = opts.clock ?? new ManualClock();
    this.rng = new Rng(opts.seed ?? 1);
    this.faults = new FaultInjector(this.rng, () => this.clock.now());
    this.eventWindow = opts.eventWindow ?? 5000;
  }

  // ---------------- Reader ----------------

  async get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]> {
    this.fault('get', kind, key.name);
    return this.getNow(kind, key);
  }

  /** Synchronous read without faults: for invariant checkers and test assertions. */
  getNow<K extends Kind>(kind: K, key: ObjectKey): KindMap[K] {
    const o = this.bucket(kind).get(keyString(key));
    if (!o) throw new ApiError('NotFound', `${KIND_INFO[kind].plural} "${key.name}" not found`);
    return clone(o) as unknown as KindMap[K];
  }

  tryGetNow<K extends Kind>(kind: K, key: ObjectKey): KindMap[K] | undefined {
    const o = this.bucket(kind).get(keyString(key));
    return o ? (clone(o) as unknown as KindMap[K]) : undefined;
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    this.fault('list', kind, undefined);
    const all = this.listNow(kind, opts);
    if (opts.limit === undefined || opts.limit <= 0) return { items: all, resourceVersion: String(this.rv) };
    // Pages in key order; the token is the last key served (the model answers from its current
    // state, where the real server serves every page from the first page's snapshot).
    const after = opts.continue ?? '';
    const rest = after ? all.filter((o) => keyString(keyOfObj(o)) > after) : all;
    const items = rest.slice(0, opts.limit);
    const out: ObjectList<KindMap[K]> = { items, resourceVersion: String(this.rv) };
    if (rest.length > items.length) out.continue = keyString(keyOfObj(items[items.length - 1]!));
    return out;
  }

  /** The optional oldest-first capability (api/oldest-first.ts), so tests and the simulator take that path. */
  async listOldestFirst<K extends Kind>(
    kind: K,
    opts: OldestFirstOptions,
  ): Promise<OldestFirstPage<KindMap[K]>> {
    this.fault('list', kind, undefined);
    return pageOf<KindMap[K]>(this.bucket(kind).values(), opts);
  }

  /**
   * The stored objects themselves, without copies, for read-only hot paths (invariant checks and
   * event routing in the simulator). Callers must not mutate them.
   */
  peek<K extends Kind>(kind: K): readonly KindMap[K][] {
    return [...this.bucket(kind).values()] as unknown as KindMap[K][];
  }

  listNow<K extends Kind>(kind: K, opts: ListOptions = {}): KindMap[K][] {
    const out: KindMap[K][] = [];
    for (const o of this.bucket(kind).values()) {
      if (matchesList(o, opts)) out.push(clone(o) as unknown as KindMap[K]);
    }
    return out.sort((a, b) => keyString(keyOfObj(a)).localeCompare(keyString(keyOfObj(b))));
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  // ---------------- Writer ----------------

  /**
   * A Client whose writes are made as `user` (the model's own methods write as the controller,
   * CONTROLLER_USER). Reads are the model's own.
   */
  as(user: UserInfo): Client {
    return {
      get: (kind, key) => this.get(kind, key),
      list: (kind, opts) => this.list(kind, opts),
      create: (obj) => this.createAs(user, obj),
      update: (obj) => this.updateAs(user, obj),
      patch: (kind, key, patch, opts) => this.patchAs(user, kind, key, patch, opts),
      delete: (kind, key, opts) => this.deleteAs(user, kind, key, opts),
      updateStatus: (obj) => this.updateStatusAs(user, obj),
      patchStatus: (kind, key, patch, opts) => this.patchStatusAs(user, kind, key, patch, opts),
    };
  }

  create<T extends AnyObject>(input: T): Promise<T> {
    return this.createAs(CONTROLLER_USER, input);
  }

  update<T extends AnyObject>(input: T): Promise<T> {
    return this.updateAs(CONTROLLER_USER, input);
  }

  patch<K extends Kind>(kind: K, key: ObjectKey, patch: MergePatch, opts: PatchOptions = {}) {
    return this.patchAs(CONTROLLER_USER, kind, key, patch, opts);
  }

  updateStatus<T extends AnyObject>(input: T): Promise<T> {
    return this.updateStatusAs(CONTROLLER_USER, input);
  }

  patchStatus<K extends Kind>(kind: K, key: ObjectKey, patch: MergePatch, opts: PatchOptions = {}) {
    return this.patchStatusAs(CONTROLLER_USER, kind, key, patch, opts);
  }

  delete<K extends Kind>(kind: K, key: ObjectKey, opts: DeleteOptions = {}) {
    return this.deleteAs(CONTROLLER_USER, kind, key, opts);
  }

  // ---------------- scale subresource (what kubectl scale, HPA and KEDA use) ----------------

  /** GET `<plural>/<name>/scale`: replicas from the spec path, current replicas and selector from status. */
  async getScale(kind: Kind, key: ObjectKey): Promise<Scale> {
    this.fault('get', kind, key.name);
    const paths = this.requireScaleSubresource(kind);
    return scaleOf(this.mustGetKey(kind, key), paths);
  }

  /**
   * PUT `<plural>/<name>/scale`: writes replicas at the spec path of the main resource, validated
   * (schema and CEL) as any update of it is; `resourceVersion` is an optional precondition.
   */
  async updateScale(
    kind: Kind,
    key: ObjectKey,
    replicas: number,
    opts: PatchOptions = {},
    user: UserInfo = CONTROLLER_USER,
  ): Promise<Scale> {
    return this.write('patch', kind, key.name, () => {
      const paths = this.requireScaleSubresource(kind);
      const cur = this.mustGetKey(kind, key);
      this.checkUpdatePreconditions(kind, cur, opts.resourceVersion, opts.uid, false);
      if (!Number.isInteger(replicas) || replicas < 0) {
        throw invalid(kind, key.name, [
          {
            field: 'spec.replicas',
            message: `Invalid value: ${replicas}: must be greater than or equal to 0`,
          },
        ]);
      }
      const next = clone(cur);
      setAtPath(next, paths.specReplicasPath, replicas);
      return scaleOf(
        this.replace(kind, cur, next, { user, operation: 'UPDATE', subresource: 'scale' }),
        paths,
      );
    });
  }

  private async createAs<T extends AnyObject>(user: UserInfo, input: T): Promise<T> {
    const kind = input.kind as Kind;
    const obj = clone(input) as unknown as Obj;
    const name = obj.metadata?.name || (obj.metadata?.generateName ? obj.metadata.generateName : '');
    return this.write('create', kind, name, () => {
      if (!KIND_INFO[kind]) throw new ApiError('BadRequest', `unknown kind ${String(kind)}`);
      obj.apiVersion = KIND_INFO[kind].apiVersion;
      const meta = obj.metadata;
      if (!meta) throw invalid(kind, '', [{ field: 'metadata', message: 'Required value' }]);
      if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${this.rng.chars(5)}`;
      const key = { namespace: meta.namespace ?? '', name: meta.name };
      if (this.bucket(kind).has(keyString(key))) {
        throw new ApiError('AlreadyExists', `${KIND_INFO[kind].plural} "${meta.name}" already exists`);
      }
      if (KIND_INFO[kind].hasStatusSubresource) delete obj.status;
      meta.uid = this.newUid();
      meta.creationTimestamp = toSecondsTimestamp(this.clock.now());
      delete meta.deletionTimestamp;
      delete meta.resourceVersion;
      if (KIND_INFO[kind].hasSpec && kind !== 'Lease') meta.generation = 1;
      this.opts.defaulters?.[kind]?.(obj);
      this.validate(kind, obj);
      this.admit(kind, { user, operation: 'CREATE' }, obj, undefined);
      return this.commit(kind, 'ADDED', obj);
    }) as unknown as Promise<T>;
  }

  private async updateAs<T extends AnyObject>(user: UserInfo, input: T): Promise<T> {
    const kind = input.kind as Kind;
    const obj = clone(input) as unknown as Obj;
    return this.write('update', kind, obj.metadata.name, () => {
      const cur = this.mustGet(kind, obj);
      this.checkUpdatePreconditions(kind, cur, obj.metadata.resourceVersion, obj.metadata.uid, true);
      keepStoredStatus(kind, cur, obj);
      return this.replace(kind, cur, obj, { user, operation: 'UPDATE' });
    }) as unknown as Promise<T>;
  }

  private async patchAs<K extends Kind>(
    user: UserInfo,
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts: PatchOptions = {},
  ) {
    return this.write('patch', kind, key.name, () => {
      const cur = this.mustGetKey(kind, key);
      const patchRv = (patch.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      this.checkUpdatePreconditions(kind, cur, opts.resourceVersion ?? patchRv, opts.uid, false);
      const next = applyMergePatch(cur, patch) as Obj;
      keepStoredStatus(kind, cur, next);
      return this.replace(kind, cur, next, { user, operation: 'UPDATE' });
    }) as unknown as Promise<KindMap[K]>;
  }

  private async updateStatusAs<T extends AnyObject>(user: UserInfo, input: T): Promise<T> {
    const kind = input.kind as Kind;
    const obj = clone(input) as unknown as Obj;
    return this.write('updateStatus', kind, obj.metadata.name, () => {
      this.requireStatusSubresource(kind);
      const cur = this.mustGet(kind, obj);
      this.checkUpdatePreconditions(kind, cur, obj.metadata.resourceVersion, obj.metadata.uid, true);
      const next = clone(cur);
      if (obj.status === undefined) delete next.status;
      else next.status = obj.status;
      return this.replace(kind, cur, next, { user, operation: 'UPDATE', subresource: 'status' });
    }) as unknown as Promise<T>;
  }

  private async patchStatusAs<K extends Kind>(
    user: UserInfo,
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts: PatchOptions = {},
  ) {
    return this.write('patchStatus', kind, key.name, () => {
      this.requireStatusSubresource(kind);
      const cur = this.mustGetKey(kind, key);
      const patchRv = (patch.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      this.checkUpdatePreconditions(kind, cur, opts.resourceVersion ?? patchRv, opts.uid, false);
      const patched = applyMergePatch(cur, patch) as Obj;
      const next = clone(cur);
      if (patched.status === undefined) delete next.status;
      else next.status = patched.status;
      return this.replace(kind, cur, next, { user, operation: 'UPDATE', subresource: 'status' });
    }) as unknown as Promise<KindMap[K]>;
  }

  private async deleteAs<K extends Kind>(user: UserInfo, kind: K, key: ObjectKey, opts: DeleteOptions = {}) {
    return this.write('delete', kind, key.name, () => this.deleteNow(kind, key, opts, user)) as Promise<
      KindMap[K] | undefined
    >;
  }

  /**
   * Delete without faults or a write record. Without a user it is what the garbage collector does
   * server-side (no admission).
   */
  private deleteNow(kind: Kind, key: ObjectKey, opts: DeleteOptions = {}, user?: UserInfo): Obj | undefined {
    const cur = this.mustGetKey(kind, key);
    const pre = opts.preconditions ?? {};
    if (pre.uid !== undefined && pre.uid !== cur.metadata.uid) {
      throw new ApiError(
        'Conflict',
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid}`,
      );
    }
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== cur.metadata.resourceVersion) {
      throw new ApiError(
        'Conflict',
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion}`,
      );
    }
    if (user) this.admit(kind, { user, operation: 'DELETE' }, undefined, cur);
    const graceful =
      kind === 'Pod' &&
      opts.gracePeriodSeconds !== 0 &&
      typeof (cur as { spec?: { nodeName?: string } }).spec?.nodeName === 'string' &&
      (cur as { spec?: { nodeName?: string } }).spec?.nodeName !== '';
    if ((cur.metadata.finalizers?.length ?? 0) > 0 || graceful) {
      if (cur.metadata.deletionTimestamp) return clone(cur);
      const next = clone(cur);
      next.metadata.deletionTimestamp = toSecondsTimestamp(this.clock.now());
      next.metadata.deletionGracePeriodSeconds = graceful ? (opts.gracePeriodSeconds ?? 30) : 0;
      return this.commit(kind, 'MODIFIED', next);
    }
    this.remove(kind, cur);
    return undefined;
  }

  // ---------------- Watcher ----------------

  /**
   * Replays synchronously (current state when `resourceVersion` is unset or "0", else the events
   * after it), then delivers every matching commit synchronously. A version older than the event
   * window closes the watch at once with Gone, as the server answers 410; so does a `watch` fault.
   */
  watch<K extends Kind>(kind: K, opts: WatchOptions, handlers: WatchHandlers<KindMap[K]>): () => void {
    const w: ModelWatch = { kind, opts, handlers: handlers as unknown as WatchHandlers<Obj> };
    const stop = () => {
      this.watchers.delete(w);
    };
    const rule = this.faults.check('watch', kind, undefined);
    if (rule) {
      handlers.onClose?.(FaultInjector.errorFor(rule, 'watch', kind, undefined));
      return stop;
    }
    const rv = opts.resourceVersion;
    if (rv === undefined || rv === '' || rv === '0') {
      const replay = this.listNow(kind, opts).map((o) => ({ type: 'ADDED' as const, object: o as Obj }));
      this.deliverReplay(w, replay);
      return stop;
    }
    const from = Number(rv);
    if (!Number.isInteger(from) || from < 0) {
      handlers.onClose?.(new ApiError('BadRequest', `invalid resourceVersion ${JSON.stringify(rv)}`));
      return stop;
    }
    const oldest = this.events[0]?.rv ?? this.rv;
    if (from < oldest - 1 && this.events.length >= this.eventWindow) {
      handlers.onClose?.(new ApiError('Gone', `too old resource version: ${from} (${oldest - 1})`));
      return stop;
    }
    const replay = this.events
      .filter((e) => e.rv > from && e.kind === kind && matchesList(e.object, opts))
      .map((e) => ({ type: e.type, object: clone(e.object) }));
    this.deliverReplay(w, replay);
    return stop;
  }

  /** Replays, then goes live; commits made by a handler during the replay queue up behind it. */
  private deliverReplay(w: ModelWatch, replay: WatchEvent<Obj>[]): void {
    w.queued = replay;
    this.watchers.add(w);
    while (w.queued.length > 0 && this.watchers.has(w)) w.handlers.onEvent(w.queued.shift()!);
    delete w.queued;
  }

  /**
   * A BOOKMARK at the current resourceVersion to every open watch that asked for them, as the API
   * server sends periodically: a quiet watch learns how far it may resume from.
   */
  sendBookmarks(kind?: Kind): void {
    const rv = String(this.rv);
    for (const w of [...this.watchers]) {
      if (kind !== undefined && w.kind !== kind) continue;
      if (w.opts.allowWatchBookmarks && this.watchers.has(w)) w.handlers.onBookmark?.(rv);
    }
  }

  /**
   * Ends open watches from the server's side, as a server timeout (no error), a restarting API
   * server or a dropped connection (an error) does. Returns how many ended.
   */
  closeWatches(opts: { kind?: Kind; error?: ApiError } = {}): number {
    let n = 0;
    for (const w of [...this.watchers]) {
      if (opts.kind !== undefined && w.kind !== opts.kind) continue;
      if (!this.watchers.delete(w)) continue;
      n++;
      w.handlers.onClose?.(opts.error);
    }
    return n;
  }

  /** Open watches (for tests: a stopped informer leaves none behind). */
  get openWatches(): number {
    return this.watchers.size;
  }

  /** Events after `rv` (all kinds), for cache views. */
  eventsSince(rv: number): { events: ModelEvent[]; complete: boolean } {
    const oldest = this.events[0]?.rv ?? this.rv + 1;
    const complete = rv >= oldest - 1 || this.events.length < this.eventWindow;
    // Events are in resourceVersion order: binary search for the first one after `rv`.
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.rv > rv) hi = mid;
      else lo = mid + 1;
    }
    return { events: this.events.slice(lo), complete };
  }

  // ---------------- what a kubelet and the garbage collector do ----------------

  /** Finishes graceful pod deletions (a kubelet would after the containers stop). */
  completePodDeletions(filter: (pod: KindMap['Pod']) => boolean = () => true): number {
    let n = 0;
    for (const o of [...this.bucket('Pod').values()]) {
      const pod = o as unknown as KindMap['Pod'];
      if (pod.metadata.deletionTimestamp && (pod.metadata.finalizers?.length ?? 0) === 0 && filter(pod)) {
        this.remove('Pod', o);
        n++;
      }
    }
    return n;
  }

  /** Sets pod status as a kubelet would (for tests and the simulator), through the status subresource. */
  setPodStatusNow(key: ObjectKey, status: KindMap['Pod']['status']): KindMap['Pod'] {
    const cur = this.mustGetKey('Pod', key);
    const next = clone(cur);
    next.status = clone(status);
    return this.commit('Pod', 'MODIFIED', next) as unknown as KindMap['Pod'];
  }

  /** All objects of every kind, for invariant checkers. */
  snapshot(): { [K in Kind]: KindMap[K][] } {
    const out = {} as { [K in Kind]: KindMap[K][] };
    for (const kind of Object.keys(KIND_INFO) as Kind[]) {
      (out as Record<Kind, unknown[]>)[kind] = this.listNow(kind);
    }
    return out;
  }

  // ---------------- internals ----------------

  private bucket(kind: Kind): Map<string, Obj> {
    let b = this.store.get(kind);
    if (!b) {
      b = new Map();
      this.store.set(kind, b);
    }
    return b;
  }

  private fault(verb: RequestVerb, kind: Kind, name: string | undefined): void {
    const rule = this.faults.check(verb, kind, name);
    const isRead = verb === 'get' || verb === 'list';
    if (rule && (isRead || !rule.appliedBeforeError)) throw FaultInjector.errorFor(rule, verb, kind, name);
    if (rule) this.pendingAppliedFault = FaultInjector.errorFor(rule, verb, kind, name);
  }

  private pendingAppliedFault: ApiError | undefined;

  private async write<T>(verb: RequestVerb, kind: Kind, name: string, fn: () => T): Promise<T> {
    this.pendingAppliedFault = undefined;
    this.fault(verb, kind, name);
    const after = this.pendingAppliedFault;
    this.pendingAppliedFault = undefined;
    const result = fn();
    this.writes.push({ verb, kind, name });
    if (after) throw after;
    return result;
  }

  private mustGet(kind: Kind, obj: Obj): Obj {
    return this.mustGetKey(kind, { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name });
  }

  private mustGetKey(kind: Kind, key: ObjectKey): Obj {
    const o = this.bucket(kind).get(keyString(key));
    if (!o) throw new ApiError('NotFound', `${KIND_INFO[kind].plural} "${key.name}" not found`);
    return o;
  }

  private requireScaleSubresource(kind: Kind): ScalePaths {
    const paths = KIND_INFO[kind].scale;
    if (!paths) throw new ApiError('NotFound', `${KIND_INFO[kind].plural} has no scale subresource`);
    return paths;
  }

  private requireStatusSubresource(kind: Kind): void {
    if (!KIND_INFO[kind].hasStatusSubresource) {
      throw new ApiError('NotFound', `${KIND_INFO[kind].plural} has no status subresource`);
    }
  }

  private checkUpdatePreconditions(
    kind: Kind,
    cur: Obj,
    rv: string | undefined,
    uid: string | undefined,
    rvRequired: boolean,
  ): void {
    if (rvRequired && (rv === undefined || rv === '')) {
      throw invalid(kind, cur.metadata.name, [
        { field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' },
      ]);
    }
    if (uid !== undefined && uid !== '' && uid !== cur.metadata.uid) {
      throw new ApiError(
        'Conflict',
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${cur.metadata.uid}`,
      );
    }
    if (rv !== undefined && rv !== '' && rv !== cur.metadata.resourceVersion) {
      throw new ApiError(
        'Conflict',
        `Operation cannot be fulfilled on ${KIND_INFO[kind].plural} "${cur.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
  }

  /** Common tail of update/patch/status writes: immutables, finalizer rules, generation, commit. */
  private replace(kind: Kind, cur: Obj, next: Obj, req: Req): Obj {
    const statusOnly = req.subresource === 'status';
    const m = next.metadata;
    const c = cur.metadata;
    m.name = c.name;
    if (c.namespace !== undefined) m.namespace = c.namespace;
    else delete m.namespace;
    m.uid = c.uid!;
    m.creationTimestamp = c.creationTimestamp!;
    if (c.deletionTimestamp) {
      m.deletionTimestamp = c.deletionTimestamp;
      const added = (m.finalizers ?? []).filter((f) => !(c.finalizers ?? []).includes(f));
      if (added.length > 0) {
        throw invalid(kind, c.name, [
          {
            field: 'metadata.finalizers',
            message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
          },
        ]);
      }
    } else delete m.deletionTimestamp;
    if (c.deletionGracePeriodSeconds !== undefined)
      m.deletionGracePeriodSeconds = c.deletionGracePeriodSeconds;
    if (m.finalizers?.length === 0) delete m.finalizers;
    if (m.generation === undefined && c.generation !== undefined) m.generation = c.generation;
    m.generation = c.generation;
    if (m.generation === undefined) delete m.generation;
    if (!statusOnly && c.generation !== undefined && !deepEqual(specOf(kind, cur), specOf(kind, next))) {
      m.generation = c.generation + 1;
    }
    this.opts.defaulters?.[kind]?.(next);
    this.validate(kind, next, cur);
    this.admit(kind, req, next, cur);
    // A no-op write does not bump resourceVersion, as on the real server.
    const { resourceVersion: _a, ...mNoRv } = m;
    const { resourceVersion: _b, ...cNoRv } = c;
    if (deepEqual({ ...next, metadata: mNoRv }, { ...cur, metadata: cNoRv })) return clone(cur);
    if (c.deletionTimestamp && (m.finalizers?.length ?? 0) === 0) {
      const gracefulPod = kind === 'Pod' && (c.deletionGracePeriodSeconds ?? 0) > 0;
      if (!gracefulPod) {
        this.remove(kind, next, next);
        return clone(next);
      }
    }
    return this.commit(kind, 'MODIFIED', next);
  }

  private validate(kind: Kind, obj: Obj, old?: Obj): void {
    const causes: FieldCause[] = [];
    const m = obj.metadata;
    if (!m.name)
      causes.push({ field: 'metadata.name', message: 'Required value: name or generateName is required' });
    else if (m.name.length > 253 || !DNS_SUBDOMAIN.test(m.name)) {
      causes.push({
        field: 'metadata.name',
        message: `Invalid value: ${JSON.stringify(m.name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
      });
    }
    for (const [k, v] of Object.entries(m.labels ?? {})) {
      if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) {
        causes.push({
          field: `metadata.labels`,
          message: `Invalid value: ${JSON.stringify(v)} for label ${k}`,
        });
      }
    }
    causes.push(...(this.opts.validators?.[kind]?.(obj, old) ?? []));
    if (causes.length > 0) throw invalid(kind, m.name, causes);
  }

  /** Validating admission, after schema validation (as the API server orders them). */
  private admit(kind: Kind, req: Req, object: Obj | undefined, oldObject: Obj | undefined): void {
    const checks = this.opts.admission;
    if (!checks || checks.length === 0) return;
    const meta = (object ?? oldObject)!.metadata;
    const request: AdmissionRequest<KubeObject> = {
      operation: req.operation,
      kind,
      ...(req.subresource ? { subResource: req.subresource } : {}),
      namespace: meta.namespace ?? '',
      name: meta.name,
      userInfo: req.user,
      object: object ? clone(object) : undefined,
      oldObject: oldObject ? clone(oldObject) : undefined,
    };
    for (const check of checks) {
      const denials = check(request, this.admissionStore);
      if (denials.length > 0) throw admissionError(request, denials);
    }
  }

  /** What admission steps read of the store (a webhook's watched caches, here always in sync). */
  private readonly admissionStore: AdmissionStore = {
    list: (kind, namespace) =>
      [...this.bucket(kind).values()].filter((o) => o.metadata.namespace === namespace),
  };

  private commit(kind: Kind, type: WatchEventType, obj: Obj): Obj {
    this.rv++;
    obj.metadata.resourceVersion = String(this.rv);
    const stored = clone(obj);
    this.bucket(kind).set(keyString(keyOfObj(stored)), stored);
    this.emit({ rv: this.rv, kind, type, object: stored });
    return clone(stored);
  }

  /** Removes an object; the DELETED event carries `final` (the last state written) or the stored one. */
  private remove(kind: Kind, obj: Obj, final?: Obj): void {
    const key = keyString(keyOfObj(obj));
    const cur = this.bucket(kind).get(key);
    if (!cur) return;
    this.bucket(kind).delete(key);
    this.rv++;
    const gone = clone(final ?? cur);
    gone.metadata.resourceVersion = String(this.rv);
    this.emit({ rv: this.rv, kind, type: 'DELETED', object: gone });
    this.collectGarbage(cur.metadata.uid!);
  }

  /** Background-propagation garbage collection: dependents whose every owner is gone are deleted. */
  private collectGarbage(ownerUid: string): void {
    const live = new Set<string>();
    for (const b of this.store.values()) for (const o of b.values()) live.add(o.metadata.uid!);
    for (const [kind, b] of this.store) {
      for (const o of [...b.values()]) {
        const owners = o.metadata.ownerReferences ?? [];
        if (owners.length === 0 || !owners.some((r) => r.uid === ownerUid)) continue;
        if (owners.every((r) => !live.has(r.uid)) && b.has(keyString(keyOfObj(o)))) {
          this.deleteNow(kind, keyOfObj(o));
        }
      }
    }
  }

  private emit(e: ModelEvent): void {
    this.events.push(e);
    if (this.events.length > this.eventWindow) this.events.splice(0, this.events.length - this.eventWindow);
    for (const w of [...this.watchers]) {
      if (w.kind !== e.kind || !this.watchers.has(w) || !matchesList(e.object, w.opts)) continue;
      if (w.queued) w.queued.push({ type: e.type, object: clone(e.object) });
      else w.handlers.onEvent({ type: e.type, object: clone(e.object) });
    }
  }

  private newUid(): string {
    this.uidCounter++;
    const hex = (this.rng.int(0xffffffff) >>> 0).toString(16).padStart(8, '0');
    return `${hex}-0000-4000-8000-${this.uidCounter.toString(16).padStart(12, '0')}`;
  }

  /** Model time as an RFC 3339 timestamp (for fixtures). */
  nowTimestamp(): string {
    return toTimestamp(this.clock.now());
  }
}

function invalid(kind: Kind, name: string, causes: FieldCause[]): ApiError {
  const detail = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
  return new ApiError('Invalid', `${kind} "${name}" is invalid: ${detail}`, { causes });
}

/** The value at a simple JSON path such as `.spec.minIdle`. */
function atPath(o: unknown, path: string): unknown {
  let v = o;
  for (const k of path.split('.').filter(Boolean)) v = (v as Record<string, unknown> | undefined)?.[k];
  return v;
}

function setAtPath(o: Obj, path: string, value: unknown): void {
  const keys = path.split('.').filter(Boolean);
  let v = o as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) {
    if (typeof v[k] !== 'object' || v[k] === null) v[k] = {};
    v = v[k] as Record<string, unknown>;
  }
  v[keys[keys.length - 1]!] = value;
}

function scaleOf(o: Obj, paths: ScalePaths): Scale {
  const selector = paths.labelSelectorPath ? atPath(o, paths.labelSelectorPath) : undefined;
  const m = o.metadata;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: m.name,
      ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
      ...(m.uid !== undefined ? { uid: m.uid } : {}),
      ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
      ...(m.creationTimestamp !== undefined ? { creationTimestamp: m.creationTimestamp } : {}),
    },
    spec: { replicas: Number(atPath(o, paths.specReplicasPath) ?? 0) },
    status: {
      replicas: Number(atPath(o, paths.statusReplicasPath) ?? 0),
      ...(typeof selector === 'string' ? { selector } : {}),
    },
  };
}

/** With a status subresource, writes to the main resource keep the stored status (as the API server does). */
function keepStoredStatus(kind: Kind, cur: Obj, next: Obj): void {
  if (!KIND_INFO[kind].hasStatusSubresource) return;
  if (cur.status === undefined) delete next.status;
  else next.status = clone(cur.status);
}

export function keyOfObj(o: { metadata: { namespace?: string; name: string } }): ObjectKey {
  return { namespace: o.metadata.namespace ?? '', name: o.metadata.name };
}

function specOf(kind: Kind, o: Obj): unknown {
  if (KIND_INFO[kind].hasSpec) return o.spec;
  const { metadata: _m, status: _s, ...rest } = o;
  return rest;
}

/** An oldest-first page of `objects` (those matching `opts`), the page's objects copied. */
export function pageOf<T>(objects: Iterable<KubeObject>, opts: OldestFirstOptions): OldestFirstPage<T> {
  const filter: ListOptions = {};
  if (opts.namespace !== undefined) filter.namespace = opts.namespace;
  if (opts.labelSelector !== undefined) filter.labelSelector = opts.labelSelector;
  const matching = function* () {
    for (const o of objects) if (matchesList(o, filter)) yield o;
  };
  const page = oldestFirstPage(matching(), opts);
  const out: OldestFirstPage<T> = { items: page.items.map((o) => clone(o) as unknown as T) };
  if (page.next) out.next = page.next;
  return out;
}
