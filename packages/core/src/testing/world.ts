// The one test world of the in-memory API model: a model with the CRDs' schema and rules (or some or
// none of them, or another admission layer), a ManualClock at T0, the deps object the reconcilers
// take (cache, client, now, a recorder that keeps the Events, optionally pool expectations and the
// in-memory capture agent as backend), an
// invariant tracker watching every write, and the loops tests run a reconciler in.

import type { EventSpec } from '../api/decision.ts';
import type { ObjectKey } from '../api/meta.ts';
import { isPodReady } from '../api/pod-predicates.ts';
import type { Client } from '../api/ports.ts';
import type { Kind, KindMap, Pod } from '../api/types.ts';
import type { CaptureBackend } from '../capture/backend.ts';
import { InvariantTracker } from '../invariants/tracker.ts';
import { ApiModel, type ApiModelOptions } from '../model/api-model.ts';
import { CacheView } from '../model/cache-view.ts';
import { SimCaptureAgent } from '../model/capture-agent.ts';
import { ManualClock } from '../model/clock.ts';
import { PoolExpectations } from '../pool/expectations.ts';
import { schemaModelOptions } from '../schema/index.ts';
import { DEFAULT_NAMESPACE, T0_MS } from './fixtures/meta.ts';

export interface WorldOptions {
  /** false: no CRD schema or rules at all, as a cluster without the CRDs (default true). */
  schema?: boolean;
  /** Kinds whose CRD validators are left out: what a cluster without those rules (or an older writer) lets in. */
  withoutRules?: Kind[];
  /** Model options in place of the CRDs' (e.g. the simulator's admission layer). */
  layer?: Omit<ApiModelOptions, 'clock' | 'seed'>;
  /** Reconcilers read through a CacheView this many events behind (default: they read the model). */
  lag?: number;
  /** Pool expectations in deps, observed by the cache's delete handler as the Manager wires it. */
  expectations?: boolean;
  /** The in-memory capture agent as deps.backend. */
  backend?: boolean;
}

export interface WorldDeps<C> {
  client: Client;
  cache: C;
  now: () => number;
  recorder: { record(e: EventSpec): void };
  expectations?: PoolExpectations;
  backend?: CaptureBackend;
}

export interface World<C = ApiModel> {
  clock: ManualClock;
  model: ApiModel;
  now: () => number;
  /** What the reconcilers read: the model, or a lagging CacheView with `lag`. */
  cache: C;
  deps: WorldDeps<C>;
  /** Every Event the reconcilers recorded through deps.recorder, in order. */
  events: EventSpec[];
  /** The process's pool expectations (in deps only with `expectations`). */
  expectations: PoolExpectations;
  /** The in-memory capture agent (deps.backend only with `backend`). */
  agent: SimCaptureAgent;
  /** Watches Captures, Pods and PodClaims from the start; `tracker.violations` lists what broke. */
  tracker: InvariantTracker;
  /** The reasons of `events`, in order. */
  reasons(): string[];
  key(name: string): ObjectKey;
  get<K extends Kind>(kind: K, name: string): KindMap[K];
  tryGet<K extends Kind>(kind: K, name: string): KindMap[K] | undefined;
  /** The kubelet's part: each of `pods` that is not Ready yet becomes Running and Ready. */
  warm(pods: Pod[]): void;
}

function modelOptions(opts: WorldOptions): Omit<ApiModelOptions, 'clock' | 'seed'> {
  if (opts.layer) return opts.layer;
  if (opts.schema === false) return {};
  const options = schemaModelOptions();
  const validators = { ...options.validators };
  for (const kind of opts.withoutRules ?? []) delete validators[kind];
  return { ...options, validators };
}

export function world(opts: WorldOptions & { lag: number }): World<CacheView>;
export function world(opts?: WorldOptions): World<ApiModel>;
export function world(opts: WorldOptions = {}): World<ApiModel | CacheView> {
  const clock = new ManualClock(T0_MS);
  const model = new ApiModel({ ...modelOptions(opts), clock });
  const now = () => clock.now();
  const expectations = new PoolExpectations();
  let cache: ApiModel | CacheView = model;
  if (opts.lag !== undefined) {
    const view = new CacheView(model, opts.lag);
    // The informer's delete handler, as the controller's Manager wires it.
    if (opts.expectations) view.addHandler('Pod', { onDelete: (p) => expectations.podDeleted(p) });
    cache = view;
  }
  const agent = new SimCaptureAgent(now);
  const events: EventSpec[] = [];
  const deps: WorldDeps<ApiModel | CacheView> = {
    client: model,
    cache,
    now,
    recorder: { record: (e) => void events.push(e) },
    ...(opts.expectations ? { expectations } : {}),
    ...(opts.backend ? { backend: agent } : {}),
  };
  const tracker = new InvariantTracker(now);
  for (const kind of ['Capture', 'Pod', 'PodClaim'] as const)
    model.watch(kind, {}, { onEvent: (e) => tracker.observe(kind, e.type, e.object) });
  const key = (name: string) => ({ namespace: DEFAULT_NAMESPACE, name });
  return {
    clock,
    model,
    now,
    cache,
    deps,
    events,
    expectations,
    agent,
    tracker,
    reasons: () => events.map((e) => e.reason),
    key,
    get: (kind, name) => model.getNow(kind, key(name)),
    tryGet: (kind, name) => model.tryGetNow(kind, key(name)),
    warm: (pods) => {
      for (const p of pods)
        if (!isPodReady(p))
          model.setPodStatusNow(
            { namespace: p.metadata.namespace ?? DEFAULT_NAMESPACE, name: p.metadata.name },
            { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
          );
    },
  };
}

/** A reconciler as tests call it: deps and a key in, whether to run again out. */
type Reconcile<D> = (deps: D, key: ObjectKey) => Promise<{ requeueAfterMs?: number }>;

/** Reconciles `name` until it asks for no immediate requeue, at most `max` times. */
export async function untilQuiet<D>(deps: D, reconcile: Reconcile<D>, name: string, max = 30): Promise<void> {
  for (let i = 0; i < max; i++) {
    const r = await reconcile(deps, { namespace: DEFAULT_NAMESPACE, name });
    if (r.requeueAfterMs !== 0) return;
  }
  throw new Error(`${name} did not settle`);
}

/**
 * Reconciles every named object of `kind` that still exists, round after round, until none asks to
 * run again at once (a bounded loop, as a work queue would); `eachRound` runs after every round.
 */
export async function settleAll<C>(
  w: Pick<World<C>, 'model' | 'deps'>,
  reconcile: Reconcile<WorldDeps<C>>,
  kind: Kind,
  names: string[],
  opts: { rounds?: number; eachRound?: () => Promise<unknown> } = {},
): Promise<void> {
  for (let round = 0; round < (opts.rounds ?? 20); round++) {
    let again = false;
    for (const name of names) {
      const key = { namespace: DEFAULT_NAMESPACE, name };
      if (!w.model.tryGetNow(kind, key)) continue;
      const r = await reconcile(w.deps, key);
      if (r.requeueAfterMs === 0) again = true;
    }
    await opts.eachRound?.();
    if (!again) return;
  }
  throw new Error(`${names.join(', ')} did not settle`);
}
