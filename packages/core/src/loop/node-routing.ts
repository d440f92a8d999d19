// Node routing: a node that starts or stops serving (Ready and not cordoned: pool/serving.ts) makes
// every pool re-check its Idle pods there. An unknown node counts as serving, as in serving.ts, so
// adding a healthy node or deleting a broken one's neighbour changes nothing.
import type { Node, PodPool } from '../api/types.ts';
import { nodeCanServe } from '../pool/serving.ts';
import { reconcileKey } from './reconcile-key.ts';

/** True when the node's ability to serve changed with this event. */
export function servingChanged(before: Node | undefined, after: Node | undefined): boolean {
  return (before ? nodeCanServe(before) : true) !== (after ? nodeCanServe(after) : true);
}

/** The keys a Node change touches: every pool's, when the node's serving changed; none otherwise. */
export function keysForNodeChange(
  before: Node | undefined,
  after: Node | undefined,
  pools: readonly PodPool[],
): string[] {
  if (!servingChanged(before, after)) return [];
  return pools.map((p) => reconcileKey('PodPool', p.metadata.namespace ?? '', p.metadata.name));
}
