// The deterministic simulator: several controller replicas (all active, no leader election) run
// core's reconcilers against the in-memory API model while pods die, are replaced under the same
// name, migrations are requested, claim sets scale, capture backends succeed/fail/hang, the API
// injects faults and caches lag. Safety invariants are checked after every step, convergence
// invariants after every quiet period. A violation comes with the seed and a shrunk, replayable trace.
import { LABEL_CLAIM_SET, LABEL_POOL } from '../api/constants.ts';
import { type ApiErrorReason, isApiError } from '../api/errors.ts';
import { keyOf, keyString, type ObjectKey } from '../api/meta.ts';
import type { Client, MergePatch, Reader, WatchEventType } from '../api/ports.ts';
import type { AnyObject, Capture, Kind, Pod, PodClaim, PodClaimSet, PodPool } from '../api/types.ts';
import { ClaimSuperseded } from '../capture/claim.ts';
import { acquireCapture, completeCapture, failCapture, renewCapture } from '../capture/holder-ops.ts';
import { type ClusterState, checkConvergence, checkSafety } from '../invariants/check.ts';
import { InvariantTracker } from '../invariants/tracker.ts';
import {
  type MapEvent,
  mapEvent,
  type RoutingView,
  WATCHED_KINDS,
  type WatchedKind,
} from '../loop/map-event.ts';
import {
  parseReconcileKey,
  RECONCILE_KINDS,
  type ReconcileKind,
  reconcileKey,
} from '../loop/reconcile-key.ts';
import type { UserInfo } from '../model/admission.ts';
import { type ApiModel, type ApiModelOptions, CacheView, ApiModel as Model } from '../model/api-model.ts';
import { SimCaptureAgent } from '../model/capture-agent.ts';
import { ManualClock, Rng } from '../model/clock.ts';
import type { Verb } from '../model/faults.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import { claimedBy, stateOf } from '../pool/pods.ts';
import { reconcileCapture } from '../reconcile/capture.ts';
import { reconcilePodClaim } from '../reconcile/podclaim.ts';
import { reconcilePodClaimSet } from '../reconcile/podclaimset.ts';
import { reconcilePodPool } from '../reconcile/podpool.ts';
import { SAFETY_RULES, type SafetyRules } from '../reconcile/safety-rules.ts';
import { type AdmissionMode, admissionLayer, type Refusal } from './admission-layer.ts';
import { applyKubectlWrite, genKubectlWrite, type KubectlOp, type KubectlWrite } from './kubectl-actor.ts';
import {
  quietStateViolations,
  type RepairRecord,
  repairFailures,
  repairPoint,
  type SimViolation,
} from './repair-point.ts';

export type { SimViolation } from './repair-point.ts';

export interface SimOptions {
  seed: number;
  steps: number;
  /** Controller replicas, all active at once (default 2). */
  replicas?: number;
  /** Probability that a step injects an API fault (default 0.04). */
  faultRate?: number;
  /** Probability that an `agent` action takes the capture agent down, so starts fail (default 0.15). */
  agentDownRate?: number;
  /** Legacy-writer actions that force the seed's corrupt states (default true). */
  adversary?: boolean;
  /** Steps between quiet periods with convergence checks (default 300). */
  quiesceEvery?: number;
  /**
   * The rules the controllers and holders apply (default core's SAFETY_RULES). Tests pass one broken
   * on purpose (testing/broken-rules.ts) to prove the simulator catches it.
   */
  rules?: SafetyRules;
  /** Test-only: route events through this instead of core's mapEvent (a routing bug on purpose). */
  mapEvent?: MapEvent;
  /** Replays spent shrinking a failing trace (default 300; 0 keeps the whole failing prefix). */
  shrinkBudget?: number;
  /** Extra model options (e.g. CRD schema defaulting and validation). */
  modelOptions?: Omit<ApiModelOptions, 'clock' | 'seed'>;
  /**
   * A person with kubectl making random direct writes (kubectl-actor.ts), and what the API server
   * enforces (admission-layer.ts; the model's options then come from there, not `modelOptions`).
   * On: every safety invariant holds after every step. Off: from the actor's first write that the
   * "on" layers would have refused until the next quiet period, which is a repair point
   * (repair-point.ts: controllers, then doctor, then doctor --fix), safety is suspended, except P7's
   * transitions: what the controllers decide about the damage must still never take a pod away.
   */
  kubectl?: {
    admission: AdmissionMode;
    /** Probability of a kubectl write per step (default 0.03). */
    rate?: number;
    /** The kinds of writes the actor makes (default: all). */
    ops?: readonly KubectlOp[];
  };
}

export type Action =
  | { t: 'reconcile'; ctl: number }
  | { t: 'reconcileCrash'; ctl: number; after: number }
  | { t: 'tick'; ms: number }
  | { t: 'kubelet' }
  | { t: 'deletePod'; pool: boolean; i: number }
  | { t: 'replaceWorker'; i: number }
  | { t: 'migrate'; i: number; to: boolean }
  | { t: 'scaleSet'; replicas: number }
  | { t: 'createClaim' }
  | { t: 'deleteClaim'; i: number }
  | { t: 'fault'; verb: Verb; kind: Kind; reason: ApiErrorReason; times: number; applied: boolean }
  | { t: 'lag'; ctl: number; lag: number; reads: number }
  | { t: 'restart'; ctl: number }
  | { t: 'holder'; i: number; op: 'acquire' | 'complete' | 'fail' | 'renew' }
  | { t: 'agent'; fate: 'succeed' | 'fail' | 'hang'; down: boolean }
  | { t: 'resetCapture'; http: boolean }
  | { t: 'adversary'; i: number; j: number }
  | { t: 'stripLabel'; i: number; deletePod: boolean }
  | { t: 'kubectl'; w: KubectlWrite }
  | { t: 'quiesce' };

export interface SimResult {
  seed: number;
  steps: number;
  violations: SimViolation[];
  /** The actions that ran, up to and including the first violating one. */
  trace: Action[];
  stats: Record<string, number>;
  /** The repair points of an admission-off run, in order. */
  repairs: RepairRecord[];
}

const NS = 'sim';
/** The simulated people and pods other than the controllers (who write as the model's default). */
const PERSON: UserInfo = { username: 'alice', groups: ['system:authenticated'] };
const WORKER_SA: UserInfo = {
  username: `system:serviceaccount:${NS}:worker`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
};
const ADMIN: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const LEASE_SECONDS = 60;
const WORKERS = 3;

interface Controller {
  cache: CacheView;
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

/** Actions in which the controllers (and, at a repair point, doctor) write. */
const CONTROLLER_ACTIONS = new Set<Action['t'] | undefined>(['reconcile', 'reconcileCrash', 'quiesce']);

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
    this.model.watch('Pod', {}, { onEvent: (e) => this.checkRelease(e.type, e.object as Pod) });
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

  private readonly podStates = new Map<string, { state: string | undefined; deleting: boolean }>();
  /**
   * P7 as a transition: the controllers (and doctor, at a repair point) never release a pool pod
   * (to Idle, or by deleting it) while a live claim references it; a label naming another claim,
   * or a claim migrating from its own pod, never takes a pod away.
   */
  private checkRelease(type: WatchEventType, p: Pod): void {
    const k = keyString(keyOf(p));
    const prev = this.podStates.get(k);
    if (type === 'DELETED') {
      this.podStates.delete(k);
      return;
    }
    const cur = { state: stateOf(p), deleting: Boolean(p.metadata.deletionTimestamp) };
    this.podStates.set(k, cur);
    if (!prev || !p.metadata.labels?.[LABEL_POOL] || !CONTROLLER_ACTIONS.has(this.current)) return;
    const released = (cur.state === 'Idle' && prev.state !== 'Idle') || (cur.deleting && !prev.deleting);
    if (!released) return;
    const name = p.metadata.name;
    const holder = this.model
      .peek('PodClaim')
      .find(
        (c) =>
          !c.metadata.deletionTimestamp &&
          (c.metadata.namespace ?? '') === (p.metadata.namespace ?? '') &&
          (c.spec.podName === name || c.spec.sourcePod === name),
      );
    if (!holder) return;
    this.violations.push({
      invariant: 'P7',
      message: `pod ${name} was released (${cur.deleting ? 'deleted' : 'Idle'}) during '${this.current}' while claim ${holder.metadata.name} references it (podName ${holder.spec.podName || '-'}, sourcePod ${holder.spec.sourcePod || '-'})`,
      objects: [`Pod/${k}`, `PodClaim/${keyString(keyOf(holder))}`],
    });
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

  private newController(): Controller {
    return {
      cache: new CacheView(this.model, 0),
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

  setup(rng: Rng): Promise<void> {
    return (async () => {
      const m = this.model;
      const pool: PodPool = {
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodPool',
        metadata: { name: 'web', namespace: NS },
        spec: {
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'main', image: 'web:1' }] },
          },
          minIdle: 2,
          maxPods: 8,
          releasePolicy: rng.chance(0.5) ? 'Recycle' : 'Delete',
          drainSeconds: rng.chance(0.5) ? 0 : 3,
        },
      };
      await m.create(pool);
      const set: PodClaimSet = {
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaimSet',
        metadata: { name: 'set', namespace: NS },
        spec: {
          replicas: 2,
          selector: { matchLabels: { [LABEL_CLAIM_SET]: 'set' } },
          template: { metadata: { labels: { tier: 'sim' } }, spec: { poolName: 'web' } },
        },
      };
      await m.create(set);
      for (let i = 0; i < WORKERS; i++) await this.createWorker(i);
      await this.createCapture(true);
      await this.createCapture(false);
      await this.createClaim();
      for (const ctl of this.ctls) this.enqueueAll(ctl);
    })();
  }

  async createWorker(i: number): Promise<void> {
    await this.model.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `worker-${i}`, namespace: NS, labels: { app: 'worker' } },
      spec: { containers: [{ name: 'main', image: 'worker:1' }], nodeName: `node-${i % 2}` },
    } as Pod);
  }

  async createCapture(http: boolean): Promise<void> {
    const c: Capture = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name: http ? 'cap-http' : 'cap-ext', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'worker' } },
        leaseSeconds: LEASE_SECONDS,
        timeoutSeconds: 30,
        maxAttempts: 3,
        backend: http ? { type: 'Http', url: 'http://{nodeName}:8750/v1/captures' } : { type: 'External' },
      },
    };
    await this.model.create(c);
  }

  async createClaim(): Promise<void> {
    const name = `solo-${this.claimSeq++}`;
    await this.person().create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name, namespace: NS },
      spec: { poolName: 'web' },
    } as PodClaim);
  }

  /** What a scheduler and kubelets do: place pods, make them Running/Ready, finish deletions. */
  async kubelet(): Promise<void> {
    const m = this.model;
    m.completePodDeletions();
    for (const p of m.listNow('Pod', { namespace: NS })) {
      if (p.metadata.deletionTimestamp) continue;
      if (!p.spec.nodeName) {
        const n = Number.parseInt(p.metadata.uid?.slice(-1) ?? '0', 16) % 2;
        await m.patch('Pod', keyOf(p), { spec: { nodeName: `node-${n}` } });
        continue;
      }
      if (p.status?.phase !== 'Running') {
        m.setPodStatusNow(keyOf(p), {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          podIP: '10.0.0.1',
        });
      }
    }
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
    };
    this.count(`reconcile.${kind}`);
    try {
      let res: { requeueAfterMs?: number } = {};
      if (kind === 'Capture') res = await reconcileCapture(deps, key);
      else if (kind === 'PodClaim') res = await reconcilePodClaim(deps, key);
      else if (kind === 'PodClaimSet') res = await reconcilePodClaimSet(deps, key);
      else if (kind === 'PodPool') res = await reconcilePodPool(deps, key);
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

class CrashNow extends Error {}

/** A client that dies after `n` writes: the decision's remaining writes never happen. */
function crashingClient(model: ApiModel, n: number): Client {
  let left = n;
  const guard = () => {
    if (left-- <= 0) throw new CrashNow('controller crashed mid-decision');
  };
  const guarded =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      guard();
      return fn(...args);
    };
  return {
    get: (k, key) => model.get(k, key),
    list: (k, o) => model.list(k, o),
    create: guarded((o) => model.create(o)),
    update: guarded((o) => model.update(o)),
    updateStatus: guarded((o) => model.updateStatus(o)),
    patch: guarded((k, key, p: MergePatch, o) => model.patch(k, key, p, o)),
    patchStatus: guarded((k, key, p: MergePatch, o) => model.patchStatus(k, key, p, o)),
    delete: guarded((k, key, o) => model.delete(k, key, o)),
  } as Client;
}

// ---------------- action generation ----------------

// NotFound is not injected on live reads: a quorum GET answering NotFound is authoritative, and
// liveness rests on it. Stale NotFound answers come from lagging caches (the `lag` action).
const FAULT_REASONS: ApiErrorReason[] = [
  'Conflict',
  'Unavailable',
  'Timeout',
  'TooManyRequests',
  'Gone',
  'Forbidden',
];
const FAULT_VERBS: Verb[] = [
  'get',
  'list',
  'update',
  'patch',
  'updateStatus',
  'patchStatus',
  'create',
  'delete',
];
const FAULT_KINDS: Kind[] = ['Pod', 'PodClaim', 'Capture', 'PodClaimSet', 'PodPool'];

function genAction(
  rng: Rng,
  opts: Required<Pick<SimOptions, 'replicas' | 'faultRate' | 'adversary' | 'agentDownRate'>> & {
    kubectlRate: number;
    kubectlOps?: readonly KubectlOp[];
  },
): Action {
  // Drawn only with the actor on, so runs without it keep their seeds' action sequences.
  if (opts.kubectlRate > 0 && rng.next() < opts.kubectlRate)
    return { t: 'kubectl', w: genKubectlWrite(rng, opts.kubectlOps) };
  const r = rng.next();
  if (r < opts.faultRate) {
    const reason = rng.pick(FAULT_REASONS);
    return {
      t: 'fault',
      verb: rng.pick(FAULT_VERBS),
      kind: rng.pick(FAULT_KINDS),
      reason,
      times: 1 + rng.int(3),
      applied: reason === 'Timeout' && rng.chance(0.5),
    };
  }
  const x = rng.next() * 100;
  const ctl = rng.int(opts.replicas);
  if (x < 50) return { t: 'reconcile', ctl };
  if (x < 52) return { t: 'reconcileCrash', ctl, after: rng.int(3) };
  if (x < 62) return { t: 'tick', ms: rng.chance(0.05) ? (LEASE_SECONDS + 1) * 1000 : rng.int(1500) };
  if (x < 70) return { t: 'kubelet' };
  if (x < 73) return { t: 'deletePod', pool: rng.chance(0.6), i: rng.int(16) };
  if (x < 75) return { t: 'replaceWorker', i: rng.int(WORKERS) };
  if (x < 78) return { t: 'migrate', i: rng.int(8), to: rng.chance(0.3) };
  if (x < 80) return { t: 'scaleSet', replicas: rng.int(5) };
  if (x < 81) return { t: 'createClaim' };
  if (x < 82) return { t: 'deleteClaim', i: rng.int(8) };
  if (x < 84) return { t: 'lag', ctl, lag: 1 + rng.int(4), reads: 1 + rng.int(6) };
  if (x < 85) return { t: 'restart', ctl };
  if (x < 93)
    return {
      t: 'holder',
      i: rng.int(WORKERS),
      op: rng.pick(['acquire', 'complete', 'fail', 'renew'] as const),
    };
  if (x < 95)
    return {
      t: 'agent',
      fate: rng.pick(['succeed', 'succeed', 'fail', 'hang'] as const),
      down: rng.chance(opts.agentDownRate),
    };
  if (x < 96) return { t: 'resetCapture', http: rng.chance(0.5) };
  if (x < 97 && opts.adversary) return { t: 'adversary', i: rng.int(8), j: rng.int(8) };
  if (x < 98 && opts.adversary) return { t: 'stripLabel', i: rng.int(8), deletePod: rng.chance(0.5) };
  return { t: 'reconcile', ctl };
}

// ---------------- applying actions ----------------

async function apply(w: World, a: Action): Promise<void> {
  // Faults hit controllers and capture holders; the simulated users and kubelets are not under test.
  const underTest = a.t === 'reconcile' || a.t === 'reconcileCrash' || a.t === 'holder';
  w.model.faults.suspended = !underTest;
  w.current = a.t;
  // Writers that bypass core: what they break is theirs, not a controller's transition (P7).
  w.tracker.externalWriter = a.t === 'adversary' || a.t === 'stripLabel' || a.t === 'kubectl';
  try {
    await applyAction(w, a);
  } finally {
    w.model.faults.suspended = false;
    w.current = undefined;
    w.tracker.externalWriter = false;
  }
}

async function applyAction(w: World, a: Action): Promise<void> {
  const m = w.model;
  const nth = <T>(xs: T[], i: number): T | undefined => (xs.length === 0 ? undefined : xs[i % xs.length]);
  const swallow = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      if (!isApiError(e) && !(e instanceof ClaimSuperseded)) throw e;
    }
  };
  w.count(`action.${a.t}`);
  switch (a.t) {
    case 'reconcile':
      await w.reconcileNext(a.ctl);
      return;
    case 'reconcileCrash':
      await w.reconcileNext(a.ctl, a.after);
      return;
    case 'tick':
      w.clock.advance(a.ms);
      return;
    case 'kubelet':
      await w.kubelet();
      return;
    case 'deletePod': {
      const pods = m
        .listNow('Pod', { namespace: NS })
        .filter((p) => (a.pool ? p.metadata.labels?.[LABEL_POOL] : p.metadata.labels?.app === 'worker'));
      const p = nth(pods, a.i);
      if (p) await swallow(w.person().delete('Pod', keyOf(p)));
      return;
    }
    case 'replaceWorker': {
      const key = { namespace: NS, name: `worker-${a.i}` };
      const cur = m.tryGetNow('Pod', key);
      if (cur) await swallow(m.delete('Pod', key, { gracePeriodSeconds: 0 }));
      if (!m.tryGetNow('Pod', key)) await w.createWorker(a.i);
      return;
    }
    case 'migrate': {
      const claims = m
        .listNow('PodClaim', { namespace: NS })
        .filter((c) => c.spec.podName && !c.metadata.deletionTimestamp);
      const c = nth(claims, a.i);
      if (!c) return;
      const annotations: Record<string, string> = { 'claimkit.dev/migrate': 'sim' };
      if (a.to) {
        const idle = m
          .listNow('Pod', { namespace: NS, labelSelector: 'claimkit.dev/state=Idle' })
          .filter((p) => !claimedBy(p));
        const t = nth(idle, a.i);
        if (t) annotations['claimkit.dev/migrate-to'] = t.metadata.name;
      }
      await swallow(w.person().patch('PodClaim', keyOf(c), { metadata: { annotations } }));
      return;
    }
    case 'scaleSet':
      await swallow(
        w.person().patch('PodClaimSet', { namespace: NS, name: 'set' }, { spec: { replicas: a.replicas } }),
      );
      return;
    case 'createClaim':
      await w.createClaim();
      return;
    case 'deleteClaim': {
      const solo = m
        .listNow('PodClaim', { namespace: NS })
        .filter((c) => !(c.metadata.ownerReferences ?? []).length);
      const c = nth(solo, a.i);
      if (c) await swallow(w.person().delete('PodClaim', keyOf(c)));
      return;
    }
    case 'fault':
      m.faults.inject({
        verbs: [a.verb],
        kinds: [a.kind],
        reason: a.reason,
        times: a.times,
        appliedBeforeError: a.applied,
      });
      return;
    case 'lag': {
      const ctl = w.ctls[a.ctl % w.ctls.length]!;
      ctl.cache.sync();
      ctl.cache.lag = a.lag;
      ctl.lagReads = a.reads;
      return;
    }
    case 'restart':
      w.restart(a.ctl);
      return;
    case 'holder': {
      const name = `worker-${a.i}`;
      const pod = m.tryGetNow('Pod', { namespace: NS, name });
      const key: ObjectKey = { namespace: NS, name: 'cap-ext' };
      if (!pod || !m.tryGetNow('Capture', key)) return;
      const now = () => w.clock.now();
      const belief = w.beliefs.get(pod.metadata.uid ?? '');
      const holder = m.as(WORKER_SA);
      try {
        if (a.op === 'acquire') {
          const { outcome, capture } = await acquireCapture(
            holder,
            key,
            { name, uid: pod.metadata.uid ?? '' },
            now,
            w.rules,
          );
          if (outcome.kind !== 'held' && outcome.kind !== 'closed') {
            w.beliefs.set(pod.metadata.uid ?? '', capture.status?.claim?.token ?? 0);
          }
        } else if (belief !== undefined) {
          if (a.op === 'complete')
            await completeCapture(holder, key, belief, `ref-${name}-${belief}`, now, w.rules);
          else if (a.op === 'fail') await failCapture(holder, key, belief, 'holder failed');
          else await renewCapture(holder, key, belief, now);
          if (a.op !== 'renew') w.beliefs.delete(pod.metadata.uid ?? '');
        }
      } catch (e) {
        if (e instanceof ClaimSuperseded) {
          w.count('superseded');
          w.beliefs.delete(pod.metadata.uid ?? '');
        } else if (!isApiError(e)) throw e;
      }
      return;
    }
    case 'agent':
      w.agent.nextFate = a.fate;
      w.agent.down = a.down;
      return;
    case 'resetCapture': {
      const key = { namespace: NS, name: a.http ? 'cap-http' : 'cap-ext' };
      const c = m.tryGetNow('Capture', key);
      if (c && (c.status?.phase === 'Captured' || c.status?.phase === 'Failed')) {
        await swallow(m.delete('Capture', key));
        await swallow(w.createCapture(a.http));
      }
      return;
    }
    case 'adversary': {
      // A legacy writer (the seed's buggy operator) points claim i at the pod claim j holds.
      const claims = m.listNow('PodClaim', { namespace: NS }).filter((c) => !c.metadata.deletionTimestamp);
      const ci = nth(claims, a.i);
      const cj = nth(claims, a.j);
      if (!ci || !cj || ci === cj || !cj.spec.podName || cj.spec.sourcePod || ci.spec.sourcePod) return;
      if (ci.metadata.name === cj.metadata.name) return;
      w.corrupted = true;
      await swallow(m.patch('PodClaim', keyOf(ci), { spec: { podName: cj.spec.podName } }));
      // ...and then the claim holding it is deleted, as in the seed's story (a user deletes it here;
      // scale-in of a set never picks a migrating claim, which the tracker checks separately).
      if (a.i % 2 === 0 && !cj.metadata.ownerReferences?.length)
        await swallow(m.delete('PodClaim', keyOf(cj)));
      return;
    }
    case 'stripLabel': {
      // A legacy writer (the seed's reclaimCN) removes the claimed-by label of a bound pod, and the
      // pod may then be deleted: its events must still reach the claim through spec.podName (P6).
      const claims = m
        .listNow('PodClaim', { namespace: NS })
        .filter((c) => c.spec.podName && !c.metadata.deletionTimestamp);
      const c = nth(claims, a.i);
      if (!c) return;
      const key = { namespace: NS, name: c.spec.podName! };
      await swallow(m.patch('Pod', key, { metadata: { labels: { 'claimkit.dev/claimed-by': null } } }));
      if (a.deletePod) await swallow(m.delete('Pod', key));
      return;
    }
    case 'kubectl': {
      const r = await applyKubectlWrite(m, NS, a.w);
      w.stats[`kubectl.${a.w.op}.accepted`] = (w.stats[`kubectl.${a.w.op}.accepted`] ?? 0) + r.accepted;
      w.stats[`kubectl.${a.w.op}.refused`] = (w.stats[`kubectl.${a.w.op}.refused`] ?? 0) + r.refused;
      return;
    }
    case 'quiesce':
      if (w.admission === 'off') w.repairs.push(await repairPoint(repairWorld(w)));
      else await quiesce(w);
      return;
  }
}

/** What the repair point needs of the world: doctor runs as an administrator. */
function repairWorld(w: World): Parameters<typeof repairPoint>[0] {
  return {
    doctorClient: w.model.as(ADMIN),
    namespace: NS,
    now: () => w.clock.now(),
    state: () => w.state(),
    quiesce: () => quiesce(w),
    historyViolations: () => w.newAgentViolations(),
  };
}

/** Faults off, caches caught up, every queue drained (time advanced as timers ask). */
async function quiesce(w: World): Promise<void> {
  w.model.faults.clear();
  w.agent.down = false;
  if (w.agent.nextFate === 'hang') w.agent.nextFate = 'succeed';
  for (const ctl of w.ctls) {
    w.caughtUp(ctl);
    ctl.lagReads = 0;
  }
  const horizon = w.clock.now() + 120_000;
  for (let i = 0; i < 5000; i++) {
    await w.kubelet();
    let worked = false;
    for (let c = 0; c < w.ctls.length; c++) {
      while (await w.reconcileNext(c)) {
        worked = true;
        if (++i > 5000) break;
      }
    }
    if (worked) continue;
    const due = w.nextDue();
    if (due === Infinity || due > horizon) break;
    w.clock.set(Math.max(w.clock.now(), due));
  }
}

async function checkStep(w: World, a: Action): Promise<SimViolation[]> {
  const out: SimViolation[] = [...w.violations];
  w.violations.length = 0;
  // Transitions the actor's damage caused (its own writes, and what others then did) are the
  // repair point's to judge, not the tracker's; except P7 (a claim giving up a pod nobody else
  // references), which judges only the controllers' decisions (the tracker skips external writers).
  for (const v of w.tracker.violations) {
    if (!w.damaged || v.invariant === 'P7') out.push(v);
    else w.count('kubectl.transitionsSuspended');
  }
  w.tracker.violations.length = 0;
  const state = w.state();
  if (a.t === 'quiesce') {
    if (w.admission === 'off') {
      out.push(...repairFailures(w.repairs[w.repairs.length - 1]!));
      w.damaged = false;
    } else if (w.admission === 'on') {
      out.push(...quietStateViolations(state, w.clock.now()), ...w.newAgentViolations());
    } else {
      out.push(...checkConvergence(state, w.clock.now()), ...w.newAgentViolations());
    }
    w.corrupted = false;
  } else if (w.damaged) {
    // Admission off and damage landed: safety is suspended until the next repair point.
  } else if (!w.corrupted) {
    out.push(...checkSafety(state));
  } else {
    out.push(...checkSafety(state).filter((v) => v.invariant !== 'P1'));
  }
  return out;
}

/** Runs a fixed list of actions (a trace) from a fresh world; returns the first violations. */
export async function runTrace(
  seed: number,
  actions: Action[],
  opts: Omit<SimOptions, 'seed' | 'steps'> = {},
): Promise<{
  violations: SimViolation[];
  at: number;
  stats: Record<string, number>;
  repairs: RepairRecord[];
}> {
  const w = await openWorld(seed, opts);
  for (let i = 0; i < actions.length; i++) {
    await apply(w, actions[i]!);
    const v = await checkStep(w, actions[i]!);
    if (v.length > 0) return { violations: v, at: i, stats: w.stats, repairs: w.repairs };
  }
  await apply(w, { t: 'quiesce' });
  const v = await checkStep(w, { t: 'quiesce' });
  w.stats['agent.startsRefused'] = w.agent.startsRefused;
  if ((opts as { debug?: boolean }).debug) {
    const console = (globalThis as unknown as { console: { log(s: string): void } }).console;
    for (const c of w.model.listNow('PodClaim'))
      console.log(
        JSON.stringify({
          m: c.metadata.name,
          d: c.metadata.deletionTimestamp,
          spec: c.spec,
          st: c.status?.phase,
          a: c.metadata.annotations,
        }),
      );
    for (const p of w.model.listNow('Pod'))
      console.log(
        JSON.stringify({ p: p.metadata.name, l: p.metadata.labels, d: p.metadata.deletionTimestamp }),
      );
    for (const c of w.ctls) console.log(JSON.stringify([...c.queue]));
  }
  return { violations: v, at: v.length > 0 ? actions.length : -1, stats: w.stats, repairs: w.repairs };
}

/** Generates and runs a simulation; on a violation, returns the seed and a shrunk trace. */
export async function simulate(opts: SimOptions): Promise<SimResult> {
  const rng = new Rng(opts.seed);
  const gen = {
    replicas: opts.replicas ?? 2,
    faultRate: opts.faultRate ?? 0.04,
    agentDownRate: opts.agentDownRate ?? 0.15,
    adversary: opts.adversary ?? true,
    kubectlRate: opts.kubectl ? (opts.kubectl.rate ?? 0.03) : 0,
    ...(opts.kubectl?.ops ? { kubectlOps: opts.kubectl.ops } : {}),
  };
  const every = opts.quiesceEvery ?? 300;
  const actions: Action[] = [];
  for (let i = 0; i < opts.steps; i++) {
    actions.push((i + 1) % every === 0 ? { t: 'quiesce' } : genAction(rng, gen));
  }
  const run = await runTrace(opts.seed, actions, opts);
  if (run.violations.length === 0) {
    return {
      seed: opts.seed,
      steps: opts.steps,
      violations: [],
      trace: [],
      stats: run.stats,
      repairs: run.repairs,
    };
  }
  const failing = actions.slice(0, run.at + 1);
  const trace = await shrink(opts.seed, failing, opts, opts.shrinkBudget ?? 300);
  const final = await runTrace(opts.seed, trace, opts);
  return {
    seed: opts.seed,
    steps: opts.steps,
    violations: final.violations.length > 0 ? final.violations : run.violations,
    trace,
    stats: run.stats,
    repairs: run.repairs,
  };
}

/** Delta debugging: drop chunks of actions while the trace still violates an invariant. */
export async function shrink(
  seed: number,
  trace: Action[],
  opts: Omit<SimOptions, 'seed' | 'steps'>,
  budget = 300,
): Promise<Action[]> {
  let cur = trace;
  let chunk = Math.max(1, Math.floor(cur.length / 2));
  let runs = 0;
  while (chunk >= 1 && runs < budget) {
    let changed = false;
    for (let start = 0; start < cur.length && runs < budget; ) {
      const candidate = [...cur.slice(0, start), ...cur.slice(start + chunk)];
      runs++;
      const r = await runTrace(seed, candidate, opts);
      if (r.violations.length > 0) {
        cur = candidate.slice(0, r.at + 1);
        changed = true;
      } else start += chunk;
    }
    if (!changed) chunk = Math.floor(chunk / 2);
  }
  return cur;
}

export function formatTrace(seed: number, trace: Action[]): string {
  return [
    `seed ${seed}, ${trace.length} action(s):`,
    ...trace.map((a, i) => `  ${i}: ${JSON.stringify(a)}`),
  ].join('\n');
}

export function formatViolations(vs: SimViolation[]): string {
  return vs
    .map((v) => `${v.invariant}: ${v.message}${v.objects.length ? ` [${v.objects.join(', ')}]` : ''}`)
    .join('\n');
}

// ---------------- scenarios: a world driven by hand (named regressions) ----------------

/** A set-up world (pool, claim set, workers, captures, one solo claim), controllers not yet run. */
export async function openWorld(
  seed: number,
  opts: Pick<SimOptions, 'replicas' | 'modelOptions' | 'kubectl' | 'mapEvent' | 'rules'> = {},
): Promise<World> {
  const w = new World(seed, opts.replicas ?? 2, opts);
  await w.setup(new Rng(seed ^ 0x5eed));
  return w;
}

/** Applies one action as a run does, and returns the violations the run would report for it. */
export async function step(w: World, a: Action): Promise<SimViolation[]> {
  await apply(w, a);
  return checkStep(w, a);
}

/** Replica `ctl` reconciles one object now, out of queue order (to force an interleaving). */
export function reconcileNow(w: World, ctl: number, kind: ReconcileKind, name: string): Promise<boolean> {
  return as(w, 'reconcile', () => w.reconcileNext(ctl, undefined, reconcileKey(kind, NS, name)));
}

/** Runs the controllers (and kubelets) until quiet. */
export function settle(w: World): Promise<void> {
  return as(w, 'quiesce', () => quiesce(w));
}

/** The repair point of the admission-off mode: controllers, doctor, doctor --fix, controllers. */
export function runRepairPoint(w: World): Promise<RepairRecord> {
  return as(w, 'quiesce', () => repairPoint(repairWorld(w)));
}

/** Runs `fn` as if in an action of kind `t` (checks attribute writes to who makes them). */
async function as<T>(w: World, t: Action['t'], fn: () => Promise<T>): Promise<T> {
  w.current = t;
  try {
    return await fn();
  } finally {
    w.current = undefined;
  }
}

/**
 * Every state invariant that must hold when quiet (P7 and result fencing included), after what the
 * world recorded since the last call (a controller releasing a pod a live claim references).
 */
export function quietViolations(w: World): SimViolation[] {
  const recorded = w.violations.splice(0);
  return [...recorded, ...quietStateViolations(w.state(), w.clock.now())];
}
