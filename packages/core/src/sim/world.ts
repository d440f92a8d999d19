// The simulator's world: the API model, the capture agent and the invariant tracker, wired as the
// controller's Manager wires a process: every watched change goes through core's event router (claim
// index, mapEvent, the status-only predicate, pool coalescing, Node routing) to the queues of several
// controller replicas, each with its own lagging cache, which reconcile one key at a time with core's
// reconcilers and requeue by core's queue policy and retry limiter, skipping a key while their cache
// is behind their own write (core's own-writes skip), all on the world's manual clock.

import { getOrUndefined, isApiError } from '../api/errors.ts';
import type { Client, Reader } from '../api/ports.ts';
import type { AnyObject, Capture, Pod, PodClaim, PodPool } from '../api/types.ts';
import type { ClusterState } from '../invariants/check.ts';
import { InvariantTracker } from '../invariants/tracker.ts';
import { DEFAULT_POOL_COALESCE_MS, DEFAULT_POOL_HEADROOM_COALESCE_MS } from '../loop/coalesce.ts';
import { EventRouter } from '../loop/event-router.ts';
import { OWN_WRITES_TTL_MS } from '../loop/own-writes.ts';
import { ProcessMemory } from '../loop/process-memory.ts';
import { parseReconcileKey, RECONCILE_KINDS, reconcileKey } from '../loop/reconcile-key.ts';
import { reconcileTurn, type Turn } from '../loop/reconcile-turn.ts';
import type { RoutedKind } from '../loop/routed-key.ts';
import { ownsKey, runsClusterWideWork, type Shard } from '../loop/shard.ts';
import { cachedForm, ROUTED_KINDS } from '../loop/watch-table.ts';
import { type ApiModel, ApiModel as Model } from '../model/api-model.ts';
import { CacheView } from '../model/cache-view.ts';
import { SimCaptureAgent } from '../model/capture-agent.ts';
import { ManualClock, Rng } from '../model/clock.ts';
import { PoolPodIndex } from '../pool/pool-pod-index.ts';
import { shardPin } from '../pool/shard-pin.ts';
import { podSeed } from '../pool/source.ts';
import { sweepCaptures } from '../reconcile/capture/sweep.ts';
import { SAFETY_RULES, type SafetyRules } from '../reconcile/safety-rules.ts';
import type { Action } from './actions.ts';
import { type AdmissionMode, admissionLayer, type Refusal } from './admission-layer.ts';
import { createCluster, PERSON, soloClaim } from './cluster.ts';
import { CrashNow, crashingClient } from './crashing-client.ts';
import { SIM_DEFAULTS, type SimOptions } from './options.ts';
import { watchReleases } from './release-check.ts';
import type { RepairRecord, SimViolation } from './repair-point.ts';
import { ReplicaQueue } from './replica-queue.ts';

interface Controller {
  cache: CacheView;
  /** The keys this replica reconciles (SimOptions.shards: replica i is shard i mod shards). */
  shard: Shard;
  /**
   * The replica's process memory (loop/process-memory.ts: expectations, binds in flight, pool pod
   * index, status pacer, own writes), fed by its cache's pod events; a restart starts with none.
   */
  memory: ProcessMemory;
  /** Due keys, with core's queue policy and retry delays (replica-queue.ts). */
  queue: ReplicaQueue;
  /** Since when the own-writes skip has held a key back (cleared when the key is reconciled). */
  heldSince: Map<string, number>;
  lagReads: number;
  /**
   * Keys of changes made while this replica's cache lagged. A real informer enqueues a key when its
   * cache receives the change, so the reconcile then sees it; here keys are enqueued when the model
   * changes, so they are enqueued again once the cache has caught up.
   */
  missed: Set<string>;
}

/** What a world is built with (the rest of SimOptions drives the run). */
export type WorldOptions = Pick<
  SimOptions,
  | 'modelOptions'
  | 'kubectl'
  | 'mapEvent'
  | 'statusOnlyChange'
  | 'coalesce'
  | 'ownWritesTtlMs'
  | 'rules'
  | 'headroomMinIdle'
  | 'shards'
>;

export class World {
  readonly clock = new ManualClock(Date.UTC(2026, 0, 1));
  readonly model: ApiModel;
  readonly agent: SimCaptureAgent;
  readonly tracker: InvariantTracker;
  readonly ctls: Controller[] = [];
  readonly stats: Record<string, number> = {};
  /** External-capture holder processes: what each worker pod believes its token is. */
  readonly beliefs = new Map<string, number>();
  /** Set by an adversary write; P1 safety is suspended until the next quiet period repairs it. */
  corrupted = false;
  /** Admission off: a kubectl write the "on" layers would have refused landed; safety is suspended. */
  damaged = false;
  readonly admission: AdmissionMode | undefined;
  readonly repairs: RepairRecord[] = [];
  readonly violations: SimViolation[] = [];
  /** The action being applied (refusals are attributed to the actor or to everybody else). */
  current: Action['t'] | undefined;
  private claimSeq = 0;
  private readonly agentViolationsSeen = new Set<string>();
  /** The controllers' and holders' rules, core's own unless a test injects a broken one. */
  readonly rules: SafetyRules;
  /**
   * Core's event router, as the controller's Manager has it; its parts are core's own unless a test
   * injects a broken one (SimOptions mapEvent, statusOnlyChange, coalesce).
   */
  readonly router: EventRouter;
  /** How long the replicas' own-writes skip may hold a key (core's TTL unless a test breaks it). */
  private readonly ownWritesTtlMs: number;
  /** The last version of every watched object: model events carry only the new one. */
  private readonly lastSeen = new Map<string, AnyObject>();
  /** The pods the router has seen, as a controller's pod index holds them: its Idle counts. */
  private readonly routedPods = new PoolPodIndex();
  /** SimOptions.shards (1: every replica reconciles every key). */
  private readonly shards: number;

  constructor(seed: number, replicas: number, opts: WorldOptions) {
    if (opts.kubectl && opts.modelOptions) {
      throw new Error('SimOptions.kubectl sets the model options itself: drop modelOptions');
    }
    const inNs = <T extends AnyObject>(kind: 'Capture' | 'PodClaim' | 'PodPool', ns: string) =>
      this.model.peek(kind).filter((o) => (o.metadata.namespace ?? '') === ns) as T[];
    this.router = new EventRouter({
      view: {
        captures: (ns) => inNs<Capture>('Capture', ns),
        pools: (ns) => inNs<PodPool>('PodPool', ns),
      },
      allPools: () => this.model.peek('PodPool') as PodPool[],
      coalesceMs: DEFAULT_POOL_COALESCE_MS,
      headroomCoalesceMs: DEFAULT_POOL_HEADROOM_COALESCE_MS,
      idleOf: (ns, pool) => this.routedPods.view(ns, pool).quietCount,
      ...(opts.headroomMinIdle !== undefined ? { headroomMinIdle: opts.headroomMinIdle } : {}),
      rules: {
        ...(opts.mapEvent ? { mapEvent: opts.mapEvent } : {}),
        ...(opts.statusOnlyChange ? { statusOnlyChange: opts.statusOnlyChange } : {}),
        ...(opts.coalesce ? { coalesce: opts.coalesce } : {}),
      },
    });
    this.ownWritesTtlMs = opts.ownWritesTtlMs ?? OWN_WRITES_TTL_MS;
    this.shards = opts.shards ?? 1;
    this.rules = opts.rules ?? SAFETY_RULES;
    this.admission = opts.kubectl?.admission;
    const modelOptions = this.admission
      ? admissionLayer(this.admission, (r) => this.onRefusal(r))
      : (opts.modelOptions ?? {});
    this.model = new Model({ ...modelOptions, clock: this.clock, seed });
    this.agent = new SimCaptureAgent(() => this.clock.now());
    this.tracker = new InvariantTracker(() => this.clock.now());
    for (const kind of ['Capture', 'Pod', 'PodClaim'] as const) {
      this.model.watch(kind, {}, { onEvent: (e) => this.tracker.observe(kind, e.type, e.object) });
    }
    this.model.watch('Capture', {}, { onEvent: (e) => this.countAttempts(e.object as Capture) });
    this.model.watch('Pod', {}, { onEvent: (e) => this.countSeeded(e.type, e.object as Pod) });
    watchReleases(
      this.model,
      () => this.current,
      (v) => this.violations.push(v),
    );
    for (let i = 0; i < replicas; i++) this.ctls.push(this.newController(i));
    // Nodes too: the cluster has none today, but a Node the kubectl actor or a test writes is routed.
    for (const kind of ROUTED_KINDS) {
      this.model.watch(
        kind,
        {},
        {
          onEvent: (e) => this.route(kind, e.type === 'DELETED', e.object as AnyObject),
        },
      );
    }
  }

  count(name: string): void {
    this.stats[name] = (this.stats[name] ?? 0) + 1;
  }

  private onRefusal(r: Refusal): void {
    const who = this.current === 'kubectl' ? 'kubectl' : 'others';
    this.count(`admission.${this.admission === 'on' ? 'refused' : 'wouldRefuse'}.${who}.${r.layer}`);
    if (this.admission === 'off' && who === 'kubectl') this.damaged = true;
    // Nobody but the actor is refused: the controllers, holders and people write only what the
    // rules allow. (In mode off, writes that repair the actor's damage may break them: a claim with
    // sourcePod == podName cannot be written unchanged once the CRD's rule is on.)
    if (who === 'others' && this.admission === 'on') {
      this.violations.push({
        invariant: 'P1',
        message: `the API server refused a write during '${this.current}' (${r.layer}, ${r.kind}${r.user ? `, ${r.user}` : ''}): ${r.message}`,
        objects: [],
      });
    }
  }

  /** A client for the simulated people (claims, migrations, scaling, deletions). */
  person(): Client {
    return this.model.as(PERSON);
  }

  /** Agent-side C1 violations not reported yet (they are history: reported once). */
  newAgentViolations(): SimViolation[] {
    const fresh = this.agent.tokenViolations().filter((v) => !this.agentViolationsSeen.has(v));
    for (const v of fresh) this.agentViolationsSeen.add(v);
    return fresh.map((v) => ({ invariant: 'C1', message: `agent accepted ${v}`, objects: [] }));
  }

  private readonly attempts = new Map<string, number>();
  /** Failed attempts as the controllers write them; those from a job that could not start apart. */
  private countAttempts(c: Capture): void {
    const k = c.metadata.uid ?? c.metadata.name;
    const n = c.status?.attempts ?? 0;
    if (n > (this.attempts.get(k) ?? 0)) {
      this.count('capture.attemptFailed');
      if (c.status?.lastError?.startsWith('job start failed')) this.count('capture.startFailed');
    }
    this.attempts.set(k, n);
  }

  private readonly seeds = new Set<string>();
  /** Pods created seeded from a Capture's result (spec.source), and the distinct results that seeded them. */
  private countSeeded(type: string, p: Pod): void {
    const seed = type === 'ADDED' ? podSeed(p) : undefined;
    if (!seed) return;
    this.count('source.podsSeeded');
    const k = `${seed.captureName}|${seed.token}|${seed.ref}`;
    if (!this.seeds.has(k)) this.count('source.results');
    this.seeds.add(k);
  }

  /**
   * Whether the replica reconciles `key`: its shard's, by a claim's pool and the pool's shard pin (the
   * Manager's filter). `seen` is what the replica's informer shows: routing and catching up see the
   * change being routed (a real informer stores an event before its handlers run: here the model, since
   * the CacheView takes events in only on its next read); the worker sees its cache as far as it is
   * synced (lagging caches stay behind).
   */
  private owns(ctl: Controller, key: string, seen: 'event' | 'cache' = 'event'): boolean {
    if (ctl.shard.count <= 1) return true;
    // What its informer has delivered (up to the cache's lag), as the reconcile's first read would take in.
    if (seen === 'cache') ctl.cache.sync();
    const get = <K extends 'PodClaim' | 'PodPool'>(kind: K, k: { namespace: string; name: string }) =>
      seen === 'cache' ? ctl.cache.current(kind, k) : this.model.tryGetNow(kind, k);
    return ownsKey(ctl.shard, key, {
      claimPool: (namespace, name) => get('PodClaim', { namespace, name })?.spec.poolName,
      poolPin: (namespace, pool) => shardPin(get('PodPool', { namespace, name: pool })),
    });
  }

  private newController(index: number): Controller {
    // The controller's cache keeps what the watch table says (only the pod fields claimkit reads).
    const cache = new CacheView(this.model, 0, cachedForm);
    const now = () => this.clock.now();
    const memory = new ProcessMemory(now, { ownWritesTtlMs: this.ownWritesTtlMs });
    // Fed by the cache's pod events, as the Manager's by its Pod informer's.
    cache.addHandler('Pod', memory.podHandler);
    return {
      cache,
      shard: { index: index % this.shards, count: this.shards },
      memory,
      queue: new ReplicaQueue(now),
      heldSince: new Map(),
      lagReads: 0,
      missed: new Set(),
    };
  }

  /**
   * Event handlers route every change (old and new object) through core's event router, once, and
   * queue its keys on every replica, each after the delay the router gave it (coalescing).
   */
  private route(kind: RoutedKind, deleted: boolean, obj: AnyObject): void {
    const id = `${kind}|${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const old = this.lastSeen.get(id);
    if (deleted) this.lastSeen.delete(id);
    else this.lastSeen.set(id, obj);
    // Before routing, as the controller's index handler runs before its router's.
    if (kind === 'Pod') {
      if (deleted) this.routedPods.remove(obj as Pod);
      else this.routedPods.upsert(obj as Pod);
    }
    const keys = deleted ? this.router.route(kind, old ?? obj, undefined) : this.router.route(kind, old, obj);
    const now = this.clock.now();
    for (const k of keys)
      if (k.delayMs >= DEFAULT_POOL_HEADROOM_COALESCE_MS) this.count('route.headroomWindow');
    for (const ctl of this.ctls)
      for (const k of keys) {
        // A lagging cache judges ownership again once it has caught up (as its informer would route the
        // event then): it may not show the pool's new shard pin yet.
        if (ctl.cache.lag > 0) ctl.missed.add(k.key);
        if (this.owns(ctl, k.key)) ctl.queue.addAt(k.key, now + k.delayMs);
      }
  }

  /** The replica's cache has caught up: what changed meanwhile reaches its queue (as events would). */
  caughtUp(ctl: Controller): void {
    ctl.cache.lag = 0;
    ctl.cache.kindLag = {};
    const now = this.clock.now();
    for (const k of ctl.missed) if (this.owns(ctl, k)) ctl.queue.addAt(k, now);
    ctl.missed.clear();
  }

  enqueueAll(ctl: Controller): void {
    for (const kind of RECONCILE_KINDS) {
      for (const o of this.model.listNow(kind)) {
        const key = reconcileKey(kind, o.metadata.namespace ?? '', o.metadata.name);
        if (this.owns(ctl, key)) ctl.queue.addAt(key, this.clock.now());
      }
    }
  }

  /** The cluster every run starts from, one solo claim, and every replica's queue full. */
  async setup(rng: Rng, pool?: SimOptions['pool'], poolSource?: SimOptions['poolSource']): Promise<void> {
    await createCluster(this.model, rng, pool, poolSource);
    await this.createClaim();
    for (const ctl of this.ctls) this.enqueueAll(ctl);
  }

  /** A person creates the next solo claim (solo-0, solo-1, ...). */
  async createClaim(): Promise<void> {
    const seq = this.claimSeq++;
    await this.person().create(soloClaim(`solo-${seq}`, seq));
  }

  state(): ClusterState {
    return {
      captures: this.model.peek('Capture') as Capture[],
      pods: this.model.peek('Pod') as Pod[],
      claims: this.model.peek('PodClaim') as PodClaim[],
    };
  }

  /**
   * One controller processes its next due key. `crashAfter` writes, the process "dies". `only` (a
   * queue key, `Kind|ns/name`): reconcile that key now, whether queued or not.
   */
  async reconcileNext(i: number, crashAfter?: number, only?: string): Promise<boolean> {
    const ctl = this.ctls[i % this.ctls.length]!;
    const next = only ?? ctl.queue.take(this.clock.now());
    if (next === undefined) return false;
    ctl.queue.remove(next);
    // As the Manager's worker: a claim queued before this cache knew its pool is its pool's shard's.
    if (only === undefined && !this.owns(ctl, next, 'cache')) {
      this.count('shard.skippedForeign');
      return true;
    }
    if (ctl.lagReads > 0) {
      ctl.lagReads--;
      if (ctl.lagReads === 0) this.caughtUp(ctl);
    }
    let client: Client = this.model;
    let crashed = () => false;
    if (crashAfter !== undefined) ({ client, crashed } = crashingClient(this.model, crashAfter));
    const deps = {
      cache: ctl.cache as Reader,
      client,
      now: () => this.clock.now(),
      backend: this.agent,
      rules: this.rules,
      ...ctl.memory.reconcileDeps(),
      // The world's one router routes for every replica: its index orders the waiting claims.
      waiting: this.router.references,
    };
    let turn: Turn | undefined;
    try {
      if (only === undefined && this.shards > 1) this.count(`shard.${ctl.shard.index}.reconciles`);
      turn = await reconcileTurn(next, {
        cachedVersion: async (kind, key) =>
          (await getOrUndefined(ctl.cache.get(kind, key)))?.metadata.resourceVersion,
        ownWrites: ctl.memory.ownWrites,
        queue: ctl.queue,
        deps,
        // A key reconciled on request (`only`) forces an interleaving: it is never skipped.
        force: only !== undefined,
        propagate: (e) => e instanceof CrashNow,
      });
    } catch (e) {
      if (!(e instanceof CrashNow)) throw e;
      turn = undefined;
    }
    if (turn === undefined || crashed()) {
      // The process died mid-decision (whether or not the apply step turned the crash into a
      // failed write): its memory (queue, expectations, own writes) goes with it.
      this.count(`reconcile.${parseReconcileKey(next).kind}`);
      this.count('crash');
      this.restart(i);
      return true;
    }
    if (turn.skipped) {
      this.count('skip.cacheBehind');
      this.checkHeldBack(ctl, next);
      return true;
    }
    ctl.heldSince.delete(next);
    this.count(`reconcile.${turn.kind}`);
    if (turn.error === undefined) return true;
    if (!isApiError(turn.error)) {
      const e = turn.error as Error | undefined;
      this.violations.push({
        invariant: 'P3',
        message: `reconciler threw: ${e?.stack ?? e}`,
        objects: [next],
      });
    } else this.count(`error.${turn.error.reason}`);
    return true;
  }

  /**
   * Liveness of the own-writes skip (core's OWN_WRITES_TTL_MS): a record holds its key back only
   * while it is younger than the TTL, and every skip queues the key again after at most the TTL, so
   * a key is never skipped once the TTL has passed since its first skip, and it is tried again within
   * twice the TTL of it. Otherwise a cache that never shows the newer version would stop it for good.
   */
  private checkHeldBack(ctl: Controller, key: string): void {
    const now = this.clock.now();
    const since = ctl.heldSince.get(key) ?? now;
    ctl.heldSince.set(key, since);
    const again = ctl.queue.dueAt(key) ?? Infinity;
    const why =
      now - since >= OWN_WRITES_TTL_MS
        ? `skipped ${now - since} ms after its first skip`
        : again - since >= 2 * OWN_WRITES_TTL_MS
          ? `not tried again until ${again === Infinity ? 'its next event' : `${again - since} ms after its first skip`}`
          : undefined;
    if (why) {
      this.violations.push({
        invariant: 'held-back',
        message: `${key} held back by its replica's own-writes skip: ${why} (TTL ${OWN_WRITES_TTL_MS} ms)`,
        objects: [key],
      });
    }
  }

  /**
   * The replica's capture recovery sweep, as the Manager's timer runs it (shard 0 only): one list,
   * fenced writes; an API error ends this run and the next one tries again.
   */
  async sweep(i: number): Promise<void> {
    const ctl = this.ctls[i % this.ctls.length]!;
    if (!runsClusterWideWork(ctl.shard)) return;
    try {
      const report = await sweepCaptures({
        cache: ctl.cache,
        client: this.model,
        now: () => this.clock.now(),
        backend: this.agent,
        rules: this.rules,
      });
      this.count('sweep.run');
      if (report.changed.length > 0) this.count('sweep.changed');
      if (report.stale.length > 0) this.count('sweep.stale');
    } catch (e) {
      if (!isApiError(e)) {
        this.violations.push({
          invariant: 'P3',
          message: `capture sweep threw: ${(e as Error).stack ?? e}`,
          objects: [],
        });
      } else this.count(`sweep.error.${e.reason}`);
    }
  }

  restart(i: number): void {
    const ctl = this.newController(i % this.ctls.length);
    this.ctls[i % this.ctls.length] = ctl;
    this.enqueueAll(ctl);
  }

  nextDue(): number {
    let due = Infinity;
    for (const ctl of this.ctls) due = Math.min(due, ctl.queue.nextDue());
    return due;
  }
}

/** A set-up world (pool, claim set, workers, captures, one solo claim), controllers not yet run. */
export async function openWorld(
  seed: number,
  opts: WorldOptions & Pick<SimOptions, 'replicas' | 'pool' | 'poolSource'> = {},
): Promise<World> {
  const w = new World(seed, opts.replicas ?? SIM_DEFAULTS.replicas, opts);
  await w.setup(new Rng(seed ^ 0x5eed), opts.pool, opts.poolSource);
  return w;
}
