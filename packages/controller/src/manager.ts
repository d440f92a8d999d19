// The controller Manager: informers -> core's event router -> core's work queue -> workers taking
// core's reconcile turns -> API writes. What happens between an event and a write (routing,
// coalescing, the status-only predicate, the queue policy, the own-writes skip) and what the process
// remembers (core's ProcessMemory) and watches (core's WATCH_TABLE) are core's loop/, which the
// simulator runs too. The Manager wires them to informers and runs them: workers (workers.ts), the
// sweep, resync and doctor (periodic.ts), leader election (efficiency only), readiness, its shard
// (shard-view.ts); metrics, SLIs and logs are observer.ts's. Everything it talks to is a port, so
// unit tests run the whole loop on core's in-memory ApiModel and the process wires @claimkit/kube.
import { randomUUID } from 'node:crypto';
import {
  type CaptureBackend,
  type ClaimIndex,
  type Client,
  type EventRecorder,
  EventRouter,
  intercept,
  type Kind,
  type ListWatcher,
  type PodClaim,
  ProcessMemory,
  parseReconcileKey,
  QueuedEventRecorder,
  RECONCILE_KINDS,
  type Reader,
  type ReconcileKind,
  reconcileKey,
  reconcileTurn,
  runsClusterWideWork,
  type Shard,
  sweepCaptures,
  type Timers,
  WorkQueue,
} from '@claimkit/core';
import { errorText, type Informer, InformerCache, realTimers } from '@claimkit/kube';
import { withoutClaimEvents } from './claim-event-filter.ts';
import { type AnyInformer, routeChanges, watchTable } from './informers.ts';
import { instrumentClient, instrumentSource } from './instrument.ts';
import { type Logger, silentLogger } from './log.ts';
import type { ManagerConfig, ManagerOptions } from './manager-options.ts';
import { ControllerMetrics, LEADER_ELECTION_NAME } from './metrics.ts';
import { ManagerObserver } from './observer.ts';
import { Periodic } from './periodic.ts';
import { Readiness } from './readiness.ts';
import { ShardView } from './shard-view.ts';
import { Slis } from './slis.ts';
import { withoutNodes } from './without-nodes.ts';
import { Workers } from './workers.ts';

export class Manager {
  readonly metrics: ControllerMetrics;
  readonly queue: WorkQueue;
  readonly cache: InformerCache;
  /** What the reconcilers read: the cache, without Nodes when they are not watched. */
  private readonly reader: Reader;
  /** Informer events -> queue keys (core's loop/event-router.ts). */
  private readonly router: EventRouter;
  /**
   * What this process remembers between reconciles (core's loop/process-memory.ts: expectations,
   * binds in flight, pool pod index, status pacer, own writes), as each simulated replica has it.
   */
  readonly memory: ProcessMemory;
  private readonly opts: ManagerOptions;
  private readonly config: ManagerConfig;
  private readonly timers: Timers;
  private readonly log: Logger;
  private readonly client: Client;
  private readonly source: ListWatcher;
  private readonly informers: AnyInformer[];
  private readonly captures: Informer<'Capture'>;
  private readonly claims: Informer<'PodClaim'>;
  /** Which keys and pools this process answers for (shard-view.ts). */
  private readonly shardView: ShardView;
  private readonly recorder: EventRecorder;
  private readonly backend: CaptureBackend | undefined;
  private active = false;
  /** Take keys from the queue while leading (workers.ts). */
  private readonly workers: Workers;
  /** The sweep, the resync and the doctor gauge, on timers while leading (periodic.ts). */
  private readonly periodic: Periodic[];
  /** The SLI metrics (slis.ts): claim/capture transitions, cache gauges, pool writes, refusals. */
  private readonly slis: Slis;
  /** Metrics, SLIs and log lines from turns, applied decisions and Events (observer.ts). */
  private readonly observer: ManagerObserver;
  private sweeping = false;
  private stopping = false;
  private started = false;
  private readonly readiness: Readiness;
  /** The keys this process reconciles (ManagerOptions.shard). */
  readonly shard: Shard;

  /** Which claims reference which pod, kept by the event router from the PodClaim informer. */
  get references(): ClaimIndex {
    return this.router.references;
  }

  constructor(opts: ManagerOptions) {
    this.opts = opts;
    const c = opts.config;
    this.config = c;
    this.shard = c.shard;
    this.timers = opts.timers ?? realTimers;
    this.log = opts.log ?? silentLogger;
    this.metrics = opts.metrics ?? new ControllerMetrics();
    this.metrics.shards.set(this.shard.count);
    // A sharded replica's claimkit_leader carries its shard, so an alert sees a shard nobody leads.
    if (this.shard.count > 1) {
      this.metrics.leader.remove({});
      this.metrics.leader.set(0, this.leaderLabels());
    }
    this.slis = new Slis(this.metrics, () => this.active);
    this.observer = new ManagerObserver(this.metrics, this.slis, this.log);
    const obs = (r: { verb: string; kind: string; code: number; ms: number }) =>
      this.metrics.apiRequest(r.verb, r.kind, r.code, r.ms);
    this.client = intercept(
      opts.instrument === false ? opts.client : instrumentClient(opts.client, obs),
      this.slis.refusalInterceptors(),
    );
    const source = opts.instrument === false ? opts.source : instrumentSource(opts.source, obs);
    const r = opts.readiness ?? {};
    this.readiness = new Readiness({
      timers: this.timers,
      probe:
        r.probe ??
        (() => source.list('Capture', { limit: 1, ...(c.namespace ? { namespace: c.namespace } : {}) })),
      ...(r.probeIntervalMs !== undefined ? { probeIntervalMs: r.probeIntervalMs } : {}),
      ...(r.recoveringProbeIntervalMs !== undefined
        ? { recoveringProbeIntervalMs: r.recoveringProbeIntervalMs }
        : {}),
      onChange: (ready, reason) =>
        ready ? this.log.info('ready') : this.log.warn('not ready', { reason: reason || 'stopped' }),
    });
    // The informers list and watch through the tracker, so their failures make /readyz fail.
    this.source = this.readiness.track(source);
    this.queue = new WorkQueue({ timers: this.timers, ...opts.queue, ...this.observer.queueHooks() });
    this.metrics.processingMs = () => this.queue.processingMs();
    // Kinds without an informer (none the reconcilers read today) are read live.
    this.cache = new InformerCache(this.source, {
      live: this.client,
      ...(c.namespace ? { namespace: c.namespace } : {}),
      timers: this.timers,
      log: this.log,
    });
    const written = opts.recorder && c.disableClaimEvents ? withoutClaimEvents(opts.recorder) : opts.recorder;
    this.recorder = this.observer.recorder(
      written &&
        new QueuedEventRecorder(written, {
          dropped: (e) => this.metrics.eventsDropped.inc({ type: e.type, reason: e.reason }),
        }),
    );
    const backend = typeof opts.backend === 'function' ? opts.backend(this.cache) : opts.backend;
    this.backend = backend && this.slis.countAgentRefusals(backend);
    const watchNodes = c.watchNodes;
    this.informers = watchTable(this.cache, { watchNodes });
    const informer = <K extends Kind>(kind: K) => this.cache.informer(kind) as Informer<K>;
    this.captures = informer('Capture');
    this.claims = informer('PodClaim');
    const pools = informer('PodPool');
    this.shardView = new ShardView(this.shard, {
      claim: (k) => this.claims.get(k),
      pool: (k) => pools.get(k),
    });
    const pods = informer('Pod');
    this.reader = watchNodes ? this.cache : withoutNodes(this.cache);
    // Fed by the same informer the cache reads (its handlers run as its store changes).
    this.memory = new ProcessMemory(() => this.timers.now());
    pods.addHandler(this.memory.podHandler);
    // Every change, Nodes included, goes through core's event router (the simulator routes through
    // the same one): claim index, mapEvent, the status-only predicate, pool coalescing, Node routing.
    this.router = new EventRouter({
      view: {
        captures: (n) => this.captures.list(n),
        pools: (n) => pools.list(n),
      },
      allPools: () => pools.list(),
      coalesceMs: c.poolCoalesce,
      headroomCoalesceMs: c.poolCoalesceHeadroom,
      idleOf: (ns, pool) => this.memory.poolPods.view(ns, pool).quietCount,
      sink: {
        enqueue: (k) => this.owns(k) && this.queue.add(k),
        enqueueAfter: (k, ms) => this.owns(k) && this.queue.addAfter(k, ms),
      },
    });
    routeChanges(this.informers, this.router);
    // The SLIs see transitions through update events only: a restart's initial list re-observes nothing.
    // Each shard reports its own pools and claims, so series summed over shards count each once.
    this.claims.addHandler({
      onUpdate: (old, c) => this.shardView.ownsClaim(c) && this.slis.claimUpdated(old, c),
      onDelete: (c) => this.slis.claimDeleted(c),
    });
    if (runsClusterWideWork(this.shard))
      this.captures.addHandler({ onUpdate: (old, c) => this.slis.captureUpdated(old, c) });
    const view = this.shardView;
    this.metrics.cacheGauges = () =>
      this.slis.cacheGauges({
        pools: view.ownPools(pools.list()),
        pods: view.ownPods(pods.list()),
        claims: view.ownClaims(this.claims.list()),
        now: (opts.now ?? (() => this.timers.now()))(),
      });
    this.metrics.claimPhases = () => this.slis.claimPhases(view.ownClaims(this.claims.list()));
    this.workers = new Workers({
      queue: this.queue,
      // A claim queued before this cache knew its pool (anyone's then) is its pool's shard's now.
      process: (key) => (this.owns(key) ? this.process(key) : Promise.resolve()),
      concurrency: c.concurrency,
      maxConcurrency: c.maxConcurrency,
      onCount: (n) => this.metrics.workers.set(n),
      log: this.log,
    });
    this.metrics.workers.set(0);
    // The capture sweep and the doctor are shard 0's: other shards keep no timer that would do nothing.
    const clusterWide = runsClusterWideWork(this.shard);
    this.periodic = [
      {
        name: 'sweep',
        intervalMs: clusterWide ? c.sweepInterval : 0,
        run: () => this.sweep(),
      },
      { name: 'resync', intervalMs: c.resyncInterval, run: () => this.resync() },
      {
        name: 'doctor',
        intervalMs: clusterWide ? c.doctorInterval : 0,
        firstDelayMs: 0,
        run: () => this.refreshDoctor(),
      },
    ].map((t) => new Periodic(this.timers, t));
    for (const k of RECONCILE_KINDS) {
      this.metrics.crMaxConcurrent.set(this.workers.ceiling, { controller: k.toLowerCase() });
      this.metrics.crActiveWorkers.set(0, { controller: k.toLowerCase() });
    }
  }

  /** Starts informers (throws if the first list fails: RBAC, unreachable), then campaigns or runs. */
  async start(): Promise<void> {
    if (this.started) throw new Error('manager already started');
    this.started = true;
    await this.cache.start(); // an InformerStartError names the kind that could not be listed
    this.readiness.start();
    this.log.info('caches synced', {
      objects: Object.fromEntries(this.informers.map((i) => [i.kind, i.size])),
    });
    this.workers.start();
    if (this.opts.elector) {
      this.opts.elector.start({
        onStartedLeading: () => this.activate(),
        onStoppedLeading: () => this.deactivate(),
      });
    } else this.activate();
  }

  /** /readyz: the informers synced and the API server reachable (readiness.ts). */
  get ready(): boolean {
    return this.readiness.ready;
  }

  /** Why not ready ('' when ready). */
  get notReadyReason(): string {
    return this.readiness.reason;
  }

  get leading(): boolean {
    return this.active;
  }

  /** Stop intake, finish in-flight work (up to the grace period), release the Lease. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.log.info('shutting down', { inFlight: this.queue.inFlight() });
    this.cache.stop();
    this.readiness.stop();
    for (const p of this.periodic) p.stop();
    this.queue.shutDown();
    const grace = this.config.shutdownGrace;
    let timer: unknown;
    await Promise.race([
      Promise.all([this.queue.drained(), this.workers.stop()]),
      new Promise<void>((r) => {
        timer = this.timers.setTimeout(r, grace);
      }),
    ]);
    this.timers.clearTimeout(timer);
    await this.flushEvents();
    await this.opts.tracer?.shutdown?.();
    if (this.opts.elector) await this.opts.elector.stop();
    this.log.info('stopped');
  }

  /** Enqueue every object of the reconciled kinds (this shard's). */
  resync(): void {
    for (const i of this.informers) {
      if (!RECONCILE_KINDS.includes(i.kind as ReconcileKind)) continue;
      for (const o of i.list()) {
        const key = reconcileKey(i.kind as ReconcileKind, ns(o), o.metadata.name);
        if (this.owns(key)) this.queue.add(key);
      }
    }
  }

  /** Whether this shard reconciles `key` (a claim goes with its pool: core's loop/shard.ts). */
  owns(key: string): boolean {
    return this.shardView.owns(key);
  }

  private leaderLabels(): Record<string, string> {
    return this.shard.count > 1 ? { shard: String(this.shard.index) } : {};
  }

  /** Runs the capture sweep once (the timer calls this every sweepIntervalMs while active). */
  async sweep(): Promise<void> {
    if (this.sweeping || !runsClusterWideWork(this.shard)) return;
    // The sweep lists Captures and Pods live; with no claim held anywhere it has nothing to do.
    if (!this.captures.list().some((c) => c.status?.claim)) return;
    this.sweeping = true;
    try {
      const report = await sweepCaptures(this.deps(), this.config.namespace);
      this.metrics.sweeps.inc({ result: 'success' });
      if (report.changed.length > 0 || report.stale.length > 0) this.log.info('capture sweep', { ...report });
    } catch (e) {
      this.metrics.sweeps.inc({ result: 'error' });
      this.log.warn('capture sweep failed', { error: errorText(e) });
    } finally {
      this.sweeping = false;
    }
  }

  private activate(): void {
    if (this.active || this.stopping) return;
    this.active = true;
    this.metrics.leader.set(1, this.leaderLabels());
    this.metrics.leaderStatus.set(1, { name: LEADER_ELECTION_NAME });
    this.log.info('running workers', {
      concurrency: this.config.concurrency,
      ...(this.shard.count > 1 ? { shard: `${this.shard.index}/${this.shard.count}` } : {}),
    });
    this.resync();
    this.workers.resume();
    for (const p of this.periodic) p.start();
  }

  private deactivate(): void {
    if (!this.active) return;
    this.active = false;
    this.metrics.leader.set(0, this.leaderLabels());
    this.metrics.leaderStatus.set(0, { name: LEADER_ELECTION_NAME });
    this.workers.pause();
    for (const p of this.periodic) p.stop();
    if (!this.stopping) this.log.warn('lost leadership; workers paused');
  }

  /** Runs core's doctor over the cache now (the timer calls this every doctorIntervalMs while active). */
  async refreshDoctor(): Promise<void> {
    if (!runsClusterWideWork(this.shard)) return;
    try {
      await this.slis.refreshDoctor(this.cache, {
        ...(this.config.namespace ? { namespace: this.config.namespace } : {}),
        now: this.deps().now(),
      });
    } catch (e) {
      this.log.warn('doctor over the cache failed', { error: errorText(e) });
    }
  }

  private deps() {
    return {
      cache: this.reader,
      client: this.client,
      now: this.opts.now ?? (() => this.timers.now()),
      recorder: this.recorder,
      ...this.memory.reconcileDeps(),
      waiting: this.router.references,
      ...(this.backend ? { backend: this.backend } : {}),
      ...(this.opts.tracer ? { tracer: this.opts.tracer } : {}),
    };
  }

  /** One turn of one key (core's reconcileTurn: own-writes skip, reconcile, queue policy), observed. */
  async process(key: string): Promise<void> {
    const t0 = performance.now();
    const ended = this.observer.turnStarted(parseReconcileKey(key).kind);
    const turn = await reconcileTurn(key, {
      cachedVersion: (kind, k) => this.cache.informer(kind)?.get(k)?.metadata.resourceVersion,
      ownWrites: this.memory.ownWrites,
      queue: this.queue,
      deps: this.deps(),
      newReconcileID,
      stepObserver: (t) => this.observer.step(t),
    }).finally(ended);
    this.observer.turnFinished(turn, (performance.now() - t0) / 1000);
  }

  /** Reconciles completed (any result), for tests and benches. */
  get reconciles(): number {
    return this.observer.reconciles;
  }

  /** Waits for Event writes still in flight (graceful shutdown and tests). */
  flushEvents(): Promise<void> {
    return this.observer.flushEvents();
  }

  /** PodClaims in the cache (for tests and metrics). */
  cachedClaims(namespace?: string): PodClaim[] {
    return this.claims.list(namespace);
  }
}

const ns = (o: { metadata: { namespace?: string } }) => o.metadata.namespace ?? '';

/** A reconcile turn's id in the logs: random, so replicas and restarts never repeat one. */
const newReconcileID = (): string => randomUUID();
