// One way to wrap a Client or Watcher (controller-runtime's client/interceptor): hooks around the
// calls you care about, everything else passes through. Request metrics, "which versions did this
// reconcile write", a controller that crashes mid-decision and similar test doubles are each a few
// lines of hooks instead of a hand-written copy of every port method.
import type { ObjectKey } from './meta.ts';
import type {
  Client,
  DeleteOptions,
  ListOptions,
  MergePatch,
  ObjectList,
  PatchOptions,
  Watcher,
  WatchHandlers,
  WatchOptions,
} from './ports.ts';
import type { AnyObject, Kind, KindMap } from './types.ts';
import type { ClientVerb, RequestVerb } from './verbs.ts';

/** The arguments of each Client call. For create and the updates, `key` is read from the object. */
interface CallArgs {
  get: { key: ObjectKey };
  list: { opts?: ListOptions };
  create: { key: ObjectKey; object: AnyObject };
  update: { key: ObjectKey; object: AnyObject };
  updateStatus: { key: ObjectKey; object: AnyObject };
  patch: { key: ObjectKey; patch: MergePatch; opts?: PatchOptions };
  patchStatus: { key: ObjectKey; patch: MergePatch; opts?: PatchOptions };
  delete: { key: ObjectKey; opts?: DeleteOptions };
}

/** What each Client call answers. */
export interface CallResults {
  get: AnyObject;
  list: ObjectList<AnyObject>;
  create: AnyObject;
  update: AnyObject;
  updateStatus: AnyObject;
  patch: AnyObject;
  patchStatus: AnyObject;
  delete: AnyObject | undefined;
}

/** One Client call as interceptors see it: the verb, the kind, and that verb's arguments. */
export type ApiCall<V extends ClientVerb = ClientVerb> = {
  [P in V]: { verb: P; kind: Kind } & CallArgs[P];
}[V];

export type CallResult = CallResults[ClientVerb];

/**
 * A hook around one verb. `next()` carries the call on (to the `request` hook, then the wrapped
 * client); `next(changed)` carries on with other arguments. Not calling `next` answers without
 * the wrapped client.
 */
export type CallHook<V extends ClientVerb> = (
  call: ApiCall<V>,
  next: (call?: ApiCall<V>) => Promise<CallResults[V]>,
) => Promise<CallResults[V]>;

export interface WatchCall {
  verb: 'watch';
  kind: Kind;
  opts: WatchOptions;
  handlers: WatchHandlers<AnyObject>;
}

export type Interceptors = { [V in ClientVerb]?: CallHook<V> } & {
  /** Around every Client call (inside the verb's own hook): `next()` carries the call on unchanged. */
  request?: (call: ApiCall, next: () => Promise<CallResult>) => Promise<CallResult>;
  /** Around watch: `next(changed)` starts it with other options or handlers; returns the stop function. */
  watch?: (call: WatchCall, next: (call?: WatchCall) => () => void) => () => void;
};

/** The port methods of T: what an intercepted T offers (a KubeClient's other members are not carried). */
export type Intercepted<T> = Pick<T, keyof T & RequestVerb>;

type Target = Partial<Client & Watcher>;

function keyOfObject(o: AnyObject): ObjectKey {
  return { namespace: o.metadata.namespace ?? '', name: o.metadata.name };
}

function callTarget(target: Target, c: ApiCall): Promise<CallResult> {
  const method = target[c.verb];
  if (typeof method !== 'function') throw new Error(`intercept: the wrapped client has no ${c.verb}`);
  switch (c.verb) {
    case 'get':
      return target.get!(c.kind, c.key);
    case 'list':
      return target.list!(c.kind, c.opts) as Promise<ObjectList<AnyObject>>;
    case 'create':
      return target.create!(c.object);
    case 'update':
      return target.update!(c.object);
    case 'updateStatus':
      return target.updateStatus!(c.object);
    case 'patch':
      return target.patch!(c.kind, c.key, c.patch, c.opts);
    case 'patchStatus':
      return target.patchStatus!(c.kind, c.key, c.patch, c.opts);
    case 'delete':
      return target.delete!(c.kind, c.key, c.opts);
  }
}

/**
 * `target` with `hooks` around its calls. Only the port methods that `target` has are offered, so
 * intercepting a Client gives a Client and intercepting a ListWatcher gives a ListWatcher.
 */
export function intercept<T extends Target>(target: T, hooks: Interceptors): Intercepted<T> {
  const request = hooks.request;
  const inner = (c: ApiCall): Promise<CallResult> =>
    request ? request(c, () => callTarget(target, c)) : callTarget(target, c);
  const run = <V extends ClientVerb>(call: ApiCall<V>): Promise<CallResults[V]> => {
    const own = hooks[call.verb] as CallHook<V> | undefined;
    const next = (c: ApiCall<V> = call) => inner(c as ApiCall) as Promise<CallResults[V]>;
    return own ? own(call, next) : next();
  };
  // Every method answers through the same path; the casts restore each method's generic signature.
  const client: Client & Watcher = {
    get: (kind, key) => run({ verb: 'get', kind, key }) as Promise<KindMap[typeof kind]>,
    list: (kind, opts) => run({ verb: 'list', kind, opts }) as Promise<ObjectList<KindMap[typeof kind]>>,
    create: (object) =>
      run({ verb: 'create', kind: object.kind, key: keyOfObject(object), object }) as Promise<typeof object>,
    update: (object) =>
      run({ verb: 'update', kind: object.kind, key: keyOfObject(object), object }) as Promise<typeof object>,
    updateStatus: (object) =>
      run({ verb: 'updateStatus', kind: object.kind, key: keyOfObject(object), object }) as Promise<
        typeof object
      >,
    patch: (kind, key, patch, opts) =>
      run({ verb: 'patch', kind, key, patch, opts }) as Promise<KindMap[typeof kind]>,
    patchStatus: (kind, key, patch, opts) =>
      run({ verb: 'patchStatus', kind, key, patch, opts }) as Promise<KindMap[typeof kind]>,
    delete: (kind, key, opts) =>
      run({ verb: 'delete', kind, key, opts }) as Promise<KindMap[typeof kind] | undefined>,
    watch: (kind, opts, handlers) => {
      const start = (c: WatchCall) => target.watch!(c.kind, c.opts, c.handlers as WatchHandlers<never>);
      const call: WatchCall = { verb: 'watch', kind, opts, handlers: handlers as WatchHandlers<AnyObject> };
      return hooks.watch ? hooks.watch(call, (c = call) => start(c)) : start(call);
    },
  };
  const out: Record<string, unknown> = {};
  for (const [verb, method] of Object.entries(client)) {
    if (typeof target[verb as RequestVerb] === 'function') out[verb] = method;
  }
  return out as Intercepted<T>;
}
