// What the event router hands the queue, and the shape of the named steps a key passes through on
// its way (controller-runtime's predicates): each sees the event and the key, and passes the key on,
// changed, or drops it (undefined). Production steps never drop; a broken one handed to the
// simulator as data may (sim/broken-loop.ts).
import type { AnyObject } from '../api/types.ts';
import type { WatchedKind } from './map-event.ts';

/** The kinds whose changes the router takes: the watched ones and Nodes (node-routing.ts). */
export type RoutedKind = WatchedKind | 'Node';

/** One watched change: `before` absent for an addition, `after` for a deletion. */
export interface RoutedEvent {
  kind: RoutedKind;
  before: AnyObject | undefined;
  after: AnyObject | undefined;
}

/** A key on its way to the queue. */
export interface RoutedKey {
  key: string;
  /**
   * The changed object's own key for a change it asked for (a spec, metadata or deletion change):
   * queued at once. Anything else (a key derived from another object's change, or an own change of
   * status only) is `derived` and may be coalesced.
   */
  own: boolean;
  /** How long the key waits before it is queued (0: at once). */
  delayMs: number;
}

/** What the steps may know besides the event: the router's settings. */
export interface RouterSettings {
  /** How long derived PodPool keys wait, so a burst of changes becomes one pool reconcile. */
  coalesceMs: number;
  /**
   * How long a pool with Idle headroom waits on its pods' and claims' changes (coalesce.ts); absent:
   * `coalesceMs` for every pool.
   */
  headroomCoalesceMs?: number;
  /** Whether the pool of a `PodPool|ns/name` key has Idle headroom now (coalesce.ts hasIdleHeadroom). */
  poolHasHeadroom?(poolKey: string): boolean;
}

/** A named step of the router: the key passed on (changed or not), or undefined to drop it. */
export type KeyStep = (event: RoutedEvent, key: RoutedKey, settings: RouterSettings) => RoutedKey | undefined;
