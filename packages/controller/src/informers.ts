// The Manager's informers: one per row of core's watch table (the simulator's replicas build their
// caches from the same table), and every routed kind's changes handed to core's event router.
import {
  type AnyObject,
  type EventRouter,
  type Kind,
  ROUTED_KINDS,
  type RoutedKind,
  watchedKinds,
} from '@claimkit/core';
import type { Informer, InformerCache } from '@claimkit/kube';

export type AnyInformer = Informer<Kind>;

/** Creates the informers the table lists (Nodes only with `watchNodes`); they start with the cache. */
export function watchTable(cache: InformerCache, opts: { watchNodes: boolean }): AnyInformer[] {
  return watchedKinds(opts).map((w) => {
    const { kind, routed: _routed, optional: _optional, ...informerOptions } = w;
    return cache.informerFor(kind, informerOptions) as unknown as AnyInformer;
  });
}

/** Every change of a routed kind (old and new object) goes through the router. */
export function routeChanges(informers: readonly AnyInformer[], router: EventRouter): void {
  for (const i of informers) {
    if (!ROUTED_KINDS.includes(i.kind as RoutedKind)) continue;
    const kind = i.kind as RoutedKind;
    const route = (before: AnyObject | undefined, after: AnyObject | undefined) =>
      router.route(kind, before, after);
    i.addHandler({
      onAdd: (o) => route(undefined, o),
      onUpdate: (old, o) => route(old, o),
      onDelete: (o) => route(o, undefined),
    });
  }
}
