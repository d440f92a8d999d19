// Event routing broken on purpose, for tests that prove the simulator catches a routing bug. They pass
// one of these as SimOptions.mapEvent; production code never imports this file.
import { type MapEvent, mapEvent, type RoutingView } from '../loop/map-event.ts';

/** The view with no claim referencing any pod (the claims waiting on a pool still wake). */
const withoutReferences = (view: RoutingView): RoutingView => ({
  ...view,
  references: {
    referencingIncludingDeleting: () => [],
    waitingFor: (ns, pool, limit) => view.references.waitingFor(ns, pool, limit),
    waitingToWake: (ns, pool, limit) => view.references.waitingToWake(ns, pool, limit),
    ofPool: (ns, pool) => view.references.ofPool(ns, pool),
  },
});

/**
 * Seed B's bug: a pod event reaches claims only through the claimed-by label of the object the event
 * carries (the deleted object for a deletion), neither through spec.podName/spec.sourcePod nor through
 * the label the previous version had.
 */
export const labelOnlyPodEvents: MapEvent = (kind, old, cur, view) =>
  kind === 'Pod'
    ? mapEvent(kind, cur ? undefined : old, cur, withoutReferences(view))
    : mapEvent(kind, old, cur, view);

/** Pod events stop reaching claims through spec.podName/spec.sourcePod; labels (old and new) still route. */
export const noReferenceRoutes: MapEvent = (kind, old, cur, view) =>
  mapEvent(kind, old, cur, kind === 'Pod' ? withoutReferences(view) : view);

/** A pool moving to another shard wakes only the pool, not its claims (the new shard never takes them). */
export const poolMoveWithoutClaims: MapEvent = (kind, old, cur, view) =>
  mapEvent(kind, kind === 'PodPool' && old && cur ? { ...old, metadata: cur.metadata } : old, cur, view);

/** Every update is mapped from its new object only: what an old label or selector match named is lost. */
export const newObjectOnly: MapEvent = (kind, old, cur, view) =>
  mapEvent(kind, cur ? undefined : old, cur, view);

export const BROKEN_ROUTING = {
  'P6-label-only-pod-events': labelOnlyPodEvents,
  'P6-no-reference-routes': noReferenceRoutes,
  'new-object-only': newObjectOnly,
} satisfies Record<string, MapEvent>;
