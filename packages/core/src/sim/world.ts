// The simulator's world: the API model, the capture agent and the invariant tracker, wired as the
// controller's Manager wires a process: every watched change is routed (core's mapEvent and pod
// reference index) to the queues of several controller replicas, each with its own lagging cache,
// which reconcile one key at a time with core's reconcilers.

import { isApiError } from '../api/errors.ts';
import type { Client, Reader } from '../api/ports.ts';
import type { AnyObject, Capture, Pod, PodClaim, PodPool } from '../api/types.ts';
import type { ClusterState } from '../invariants/check.ts';
import { InvariantTracker } from '../invariants/tracker.ts';
import {
  type MapEvent,
  mapEvent,
  type RoutingView,
  WATCHED_KINDS,
  type WatchedKind,
} from '../loop/map-event.ts';
import { parseReconcileKey, RECONCILE_KINDS, reconcileKey } from '../loop/reconcile-key.ts';
import { reconcile } from '../loop/reconcilers.ts';
import { type ApiModel, ApiModel as Model } from '../model/api-model.ts';
import { CacheView } from '../model/cache-view.ts';
import { SimCaptureAgent } from '../model/capture-agent.ts';
import { ManualClock, Rng } from '../model/clock.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import { PoolExpectations } from '../pool/expectations.ts';
import { podSeed } from '../pool/source.ts';
import { SAFETY_RULES, type SafetyRules } from '../reconcile/safety-rules.ts';
import type { Action } from './actions.ts';
import { type AdmissionMode, admissionLayer, type Refusal } from './admission-layer.ts';
import { createCluster, PERSON, soloClaim } from './cluster.ts';
import { CrashNow, crashingClient } from './crashing-client.ts';
import type { SimOptions } from './options.ts';
import { watchReleases } from './release-check.ts';
import type { RepairRecord, SimViolation } from './repair-point.ts';

interface Controller {
  cache: CacheView;
  /** The replica's pool expectations (a process's memory: a restart starts with none). */
  expectations: PoolExpectations;
  queue: Map<string, number>;
  failures: Map<string, number>;
  lagReads: number;
  /**
   * Keys of changes made while this replica's cache lagged. A real informer enqueues a key when its
   * cache receives the change, so the reconcile then sees it; here keys are enqueued when the model
   * changes, so they are enqueued again once the cache has caught up.
   */
  missed: Set<string>;
}

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
  /** Event routing, the controller's own (core's mapEvent) unless a test injects a broken one. */
  private readonly mapEvent: MapEvent;
  /** The controllers' and holders' rules, core's own unless a test injects a broken one. */
  readonly rules: SafetyRules;
  /** Which claims reference which pod, fed from the PodClaim watch as the controller's Manager feeds it. */
  readonly references = new ClaimIndex();
  /** The last version of every watched object: model events carry only the new one. */
  private readonly lastSeen = new Map<string, AnyObject>();
  private readonly routingView: RoutingView = {
    captures: (ns) =>
      this.model.peek('Capture').filter((c) => (c.metadata.namespace ?? '') === ns) as Capture[],
    claims: (ns) =>
      this.model.peek('PodClaim').filter((c) => (c.metadata.namespace ?? '') === ns) as PodClaim[],
    pools: (ns) => this.model.peek('PodPool').filter((p) => (p.metadata.namespace ?? '') === ns) as PodPool[],
    references: this.references,
  };

  constructor(
    seed: number,
    replicas: number,
    opts: Pick<SimOptions, 'modelOptions' | 'kubectl' | 'mapEvent' | 'rules'>,
  ) {
    if (opts.kubectl && opts.modelOptions) {
      throw new Error('SimOptions.kubectl sets the model options itself: drop modelOptions');
    }
    this.mapEvent = opts.mapEvent ?? mapEvent;
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
    for (let i = 0; i < replicas; i++) this.ctls.push(this.newController());
    for (const kind of WATCHED_KINDS) {
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

  private newController(): Controller {
    const cache = new CacheView(this.model, 0);
    const expectations = new PoolExpectations();
    // The informer's delete handler observes pods that came and went between two reconciles.
    cache.onDelete = (o) => {
      if (o.kind === 'Pod') expectations.podDeleted(o as Pod);
    };
    return {
      cache,
      expectations,
      queue: new Map(),
      failures: new Map(),
      lagReads: 0,
      missed: new Set(),
    };
  }

  /**
   * Event handlers map every change (old and new object) to the keys it affects, on every replica,
   * through the same mapEvent and reference index as the controller's Manager.
   */
  private route(kind: WatchedKind, deleted: boolean, obj: AnyObject): void {
    const id = `${kind}|${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const old = this.lastSeen.get(id);
    if (deleted) this.lastSeen.delete(id);
    else this.lastSeen.set(id, obj);
    if (kind === 'PodClaim') {
      if (deleted) this.references.remove(obj);
      else this.references.upsert(obj as PodClaim);
    }
    const keys = deleted
      ? this.mapEvent(kind, old ?? obj, undefined, this.routingView)
      : this.mapEvent(kind, old, obj, this.routingView);
    const now = this.clock.now();
    for (const ctl of this.ctls)
      for (const k of keys) {
        ctl.queue.set(k, Math.min(ctl.queue.get(k) ?? Infinity, now));
        if (ctl.cache.lag > 0) ctl.missed.add(k);
      }
  }

  /** The replica's cache has caught up: what changed meanwhile reaches its queue (as events would). */
  caughtUp(ctl: Controller): void {
    ctl.cache.lag = 0;
    const now = this.clock.now();
    for (const k of ctl.missed) ctl.queue.set(k, Math.min(ctl.queue.get(k) ?? Infinity, now));
    ctl.missed.clear();
  }

  enqueueAll(ctl: Controller): void {
    for (const kind of RECONCILE_KINDS) {
      for (const o of this.model.listNow(kind))
        ctl.queue.set(reconcileKey(kind, o.metadata.namespace ?? '', o.metadata.name), this.clock.now());
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
    const now = this.clock.now();
    let next: string | undefined = only;
    let due = Infinity;
    for (const [k, d] of only === undefined ? ctl.queue : []) {
      if (d <= now && d < due) {
        next = k;
        due = d;
      }
    }
    if (next === undefined) return false;
    ctl.queue.delete(next);
    if (ctl.lagReads > 0) {
      ctl.lagReads--;
      if (ctl.lagReads === 0) this.caughtUp(ctl);
    }
    let client: Client = this.model;
    if (crashAfter !== undefined) client = crashingClient(this.model, crashAfter);
    const { kind, ...key } = parseReconcileKey(next);
    const deps = {
      cache: ctl.cache as Reader,
      client,
      now: () => this.clock.now(),
      backend: this.agent,
      rules: this.rules,
      expectations: ctl.expectations,
    };
    this.count(`reconcile.${kind}`);
    try {
      const res = await reconcile(kind, deps, key);
      ctl.failures.delete(next);
      if (res.requeueAfterMs !== undefined) this.requeue(ctl, next, now + res.requeueAfterMs);
    } catch (e) {
      if (e instanceof CrashNow) {
        this.count('crash');
        this.restart(i);
        return true;
      }
      if (!isApiError(e)) {
        this.violations.push({
          invariant: 'P3',
          message: `reconciler threw: ${(e as Error)?.stack ?? e}`,
          objects: [next],
        });
        return true;
      }
      this.count(`error.${e.reason}`);
      const n = (ctl.failures.get(next) ?? 0) + 1;
      ctl.failures.set(next, n);
      this.requeue(ctl, next, now + Math.min(30_000, 50 * 2 ** n));
    }
    return true;
  }

  private requeue(ctl: Controller, key: string, at: number): void {
    ctl.queue.set(key, Math.min(ctl.queue.get(key) ?? Infinity, at));
  }

  restart(i: number): void {
    const ctl = this.newController();
    this.ctls[i % this.ctls.length] = ctl;
    this.enqueueAll(ctl);
  }

  nextDue(): number {
    let due = Infinity;
    for (const ctl of this.ctls) for (const d of ctl.queue.values()) due = Math.min(due, d);
    return due;
  }
}

/** A set-up world (pool, claim set, workers, captures, one solo claim), controllers not yet run. */
export async function openWorld(
  seed: number,
  opts: Pick<
    SimOptions,
    'replicas' | 'modelOptions' | 'kubectl' | 'mapEvent' | 'rules' | 'pool' | 'poolSource'
  > = {},
): Promise<World> {
  const w = new World(seed, opts.replicas ?? 2, opts);
  await w.setup(new Rng(seed ^ 0x5eed), opts.pool, opts.poolSource);
  return w;
}
