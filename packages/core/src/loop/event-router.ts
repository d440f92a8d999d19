// The event router: every watched change, from informers (the controller's Manager) or the model's
// watch (the simulator's World), becomes queue keys here, once. It keeps the claim index current
// (before routing, so a claim's own change routes through it), maps the change to keys (mapEvent, or
// node-routing.ts for Nodes), passes each key through the named steps (the status-only predicate,
// then pool coalescing) and hands the result to a sink: at once, or after a delay.
import type { AnyObject, Node, PodClaim, PodPool } from '../api/types.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import { coalesceDerivedPoolKeys, hasIdleHeadroom } from './coalesce.ts';
import { type MapEvent, mapEvent, type RoutingView } from './map-event.ts';
import { keysForNodeChange } from './node-routing.ts';
import { parseReconcileKey, RECONCILE_KINDS, type ReconcileKind, reconcileKey } from './reconcile-key.ts';
import type { KeyStep, RoutedEvent, RoutedKey, RoutedKind, RouterSettings } from './routed-key.ts';
import { statusOnlyChange } from './status-only-change.ts';

/** The router's parts, as data: core's by default; the simulator may be handed broken ones. */
export interface RouterRules {
  mapEvent: MapEvent;
  /** The status-only predicate's step (status-only-change.ts). */
  statusOnlyChange: KeyStep;
  /** Pool coalescing (coalesce.ts). */
  coalesce: KeyStep;
}

export const ROUTER_RULES: Readonly<RouterRules> = Object.freeze({
  mapEvent,
  statusOnlyChange,
  coalesce: coalesceDerivedPoolKeys,
});

/** Where routed keys go (the controller's WorkQueue, each simulated replica's queue). */
export interface RouterSink {
  enqueue(key: string): void;
  enqueueAfter(key: string, ms: number): void;
}

export interface EventRouterOptions extends Omit<RouterSettings, 'poolHasHeadroom'> {
  /** The caches (or the model) routing reads; the router adds the claim index it keeps. */
  view: Omit<RoutingView, 'references'>;
  /**
   * How many quiet Idle pods a pool has now (the process's PoolPodIndex): with headroomCoalesceMs,
   * what tells a pool with Idle headroom. Absent: every pool waits coalesceMs.
   */
  idleOf?(namespace: string, pool: string): number;
  /** hasIdleHeadroom's floor (default 16); the simulator lowers it for its small pools. */
  headroomMinIdle?: number;
  /** Every PodPool in every watched namespace: a Node change reaches them all. */
  allPools(): readonly PodPool[];
  rules?: Partial<RouterRules>;
  sink?: RouterSink;
}

export class EventRouter {
  /** Which claims reference which pod, fed by every PodClaim event before it is routed. */
  readonly references = new ClaimIndex();
  private readonly rules: RouterRules;
  private readonly view: RoutingView;
  private readonly settings: RouterSettings;
  private readonly allPools: () => readonly PodPool[];
  private readonly sink: RouterSink | undefined;

  constructor(opts: EventRouterOptions) {
    this.rules = { ...ROUTER_RULES, ...opts.rules };
    this.view = {
      ...opts.view,
      references: this.references,
      ...(opts.idleOf ? { idleOf: opts.idleOf } : {}),
    };
    const idleOf = opts.idleOf;
    this.settings = {
      coalesceMs: opts.coalesceMs,
      ...(opts.headroomCoalesceMs !== undefined && idleOf
        ? {
            headroomCoalesceMs: opts.headroomCoalesceMs,
            poolHasHeadroom: (poolKey: string) => {
              const { namespace, name } = parseReconcileKey(poolKey);
              const pool = this.view.pools(namespace).find((p) => p.metadata.name === name);
              return (
                pool !== undefined &&
                hasIdleHeadroom(
                  pool,
                  idleOf(namespace, name),
                  this.references.waitingCount(namespace, name),
                  opts.headroomMinIdle,
                )
              );
            },
          }
        : {}),
    };
    this.allPools = opts.allPools;
    this.sink = opts.sink;
  }

  /** Routes one change (`before` absent for an addition, `after` for a deletion); returns its keys. */
  route(kind: RoutedKind, before: AnyObject | undefined, after: AnyObject | undefined): RoutedKey[] {
    const obj = after ?? before;
    if (!obj) return [];
    if (kind === 'PodClaim') {
      if (after === undefined) this.references.remove(obj as PodClaim);
      else this.references.upsert(after as PodClaim);
    }
    const keys =
      kind === 'Node'
        ? keysForNodeChange(before as Node | undefined, after as Node | undefined, this.allPools())
        : this.rules.mapEvent(kind, before, after, this.view);
    const own = RECONCILE_KINDS.includes(kind as ReconcileKind)
      ? reconcileKey(kind as ReconcileKind, obj.metadata.namespace ?? '', obj.metadata.name)
      : undefined;
    const event: RoutedEvent = { kind, before, after };
    const out: RoutedKey[] = [];
    for (const key of keys) {
      let k: RoutedKey | undefined = { key, own: key === own, delayMs: 0 };
      for (const step of [this.rules.statusOnlyChange, this.rules.coalesce]) {
        k = step(event, k, this.settings);
        if (!k) break;
      }
      if (!k) continue;
      out.push(k);
      if (k.delayMs > 0) this.sink?.enqueueAfter(k.key, k.delayMs);
      else this.sink?.enqueue(k.key);
    }
    return out;
  }
}
