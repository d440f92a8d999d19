// What a controller process watches, one row a kind: how its informer indexes and trims the kind,
// and whether its changes are routed to the queue. The controller's Manager builds its informers
// from this table and the simulator's replicas build their caches from it, so neither keeps its own
// list of watched kinds.
import { REFERENCE_INDEX_FIELDS } from '../api/claim-binding.ts';
import { LABEL_CLAIMED_BY, LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import type { KubeObject } from '../api/meta.ts';
import { podFieldsRead } from '../api/pod-fields.ts';
import type { Kind, Pod } from '../api/types.ts';
import type { RoutedKind } from './routed-key.ts';

export interface WatchSpec {
  kind: Kind;
  /** Watched across the cluster whatever namespace the process watches (Nodes). */
  clusterScoped?: boolean;
  /** Label keys indexed for equality selectors. */
  indexLabels?: readonly string[];
  /** Label-key combinations indexed oldest first (a claim's gather pages a pool's Idle pods). */
  indexLabelSets?: readonly (readonly string[])[];
  /** Field paths indexed for field selectors. */
  indexFields?: readonly string[];
  /** What the cache keeps of each object (only the fields claimkit reads: api/pod-fields.ts). */
  transform?: (o: KubeObject) => KubeObject;
  /** Its changes go through the event router (the others are only read). */
  routed: boolean;
  /** Watched unless the process is told not to (`--no-watch-nodes`: no cluster-wide read). */
  optional?: 'watchNodes';
}

export const WATCH_TABLE: readonly WatchSpec[] = Object.freeze([
  { kind: 'Capture', routed: true },
  // Claims by the pods they name: pod events reach claims through podName/sourcePod (P6), in status
  // (spec for a claim an earlier release stored: api/claim-binding.ts).
  { kind: 'PodClaim', indexFields: REFERENCE_INDEX_FIELDS, routed: true },
  { kind: 'PodClaimSet', routed: true },
  { kind: 'PodPool', routed: true },
  {
    kind: 'Pod',
    // Pool pods by pool, state and claim; a pool's Idle pods oldest first (a claim's gather window).
    indexLabels: [LABEL_POOL, LABEL_STATE, LABEL_CLAIMED_BY],
    indexLabelSets: [[LABEL_POOL, LABEL_STATE]],
    transform: (o: KubeObject) => podFieldsRead(o as Pod),
    routed: true,
  },
  // Read by the pool reconciler (its owned PDB); a change needs no reconcile of its own.
  { kind: 'PodDisruptionBudget', routed: false },
  // Bind candidates and Idle pods on NotReady or cordoned nodes are recognised.
  { kind: 'Node', clusterScoped: true, routed: true, optional: 'watchNodes' },
] satisfies WatchSpec[]);

/** The rows a process watches: Nodes only when it watches them. */
export function watchedKinds(opts: { watchNodes: boolean }): readonly WatchSpec[] {
  return WATCH_TABLE.filter((w) => w.optional !== 'watchNodes' || opts.watchNodes);
}

/** The kinds whose changes the event router takes. */
export const ROUTED_KINDS: readonly RoutedKind[] = WATCH_TABLE.filter((w) => w.routed).map(
  (w) => w.kind as RoutedKind,
);

/** What a cache keeps of an object of this kind (the table's transform, or the object itself). */
export function cachedForm(o: KubeObject): KubeObject {
  const t = WATCH_TABLE.find((w) => w.kind === o.kind)?.transform;
  return t ? t(o) : o;
}
