// Event routing: which reconcile keys one watched change touches. A pure function of the kind, the
// old and the new object and a read-only view of the caches, so the controller's Manager and the
// simulator's World route through the same code. Both the old and the new object are mapped (as
// controller-runtime's handler/enqueue_mapped.go does): a label removed in this very update still
// reaches the claim it named, a selector match lost still reaches the Capture.
import { LABEL_STATE } from '../api/constants.ts';
import { matchesSelector } from '../api/labels.ts';
import type { AnyObject, Capture, Pod, PodClaim, PodPool } from '../api/types.ts';
import { type ClaimIndex, waitsForPod } from '../pool/claim-index.ts';
import { claimedBy, poolOf } from '../pool/pods.ts';
import { shardPin } from '../pool/shard-pin.ts';
import { poolWaitReason } from '../reconcile/podclaim/waiting.ts';
import { type ReconcileKind, reconcileKey } from './reconcile-key.ts';

/** The kinds whose changes are routed: the reconciled ones and Pods. */
export type WatchedKind = ReconcileKind | 'Pod';

/** What routing may read besides the changed object: the caches (or the model), never written. */
export interface RoutingView {
  /** Captures of a namespace: a pod change reaches those selecting the pod or held by it. */
  captures(namespace: string): readonly Capture[];
  /** PodPools of a namespace: a Capture's change wakes the pools whose spec.source names it. */
  pools(namespace: string): readonly PodPool[];
  /**
   * Which claims reference which pod (P6), and which wait on a pool (an Idle pod or a pool change
   * wakes them), fed from the PodClaim watch before its events are mapped.
   */
  readonly references: Pick<
    ClaimIndex,
    'referencingIncludingDeleting' | 'waitingFor' | 'waitingToWake' | 'ofPool'
  >;
  /**
   * How many quiet Idle pods a pool has (the process's pool pod index): an Idle pod's event wakes
   * only that many of the pool's oldest waiting claims. Absent: it wakes them all.
   */
  idleOf?(namespace: string, pool: string): number;
}

/**
 * The keys one change touches. `old` is absent for an addition, `cur` for a deletion (then `old` is
 * the last version seen). Keys come out de-duplicated; a reconciled kind's own key comes first.
 */
export type MapEvent = (
  kind: WatchedKind,
  old: AnyObject | undefined,
  cur: AnyObject | undefined,
  view: RoutingView,
) => string[];

export const mapEvent: MapEvent = (kind, old, cur, view) => {
  const obj = cur ?? old;
  if (!obj) return [];
  const ns = obj.metadata.namespace ?? '';
  switch (kind) {
    case 'Pod':
      return keysForPod(ns, cur as Pod | undefined, old as Pod | undefined, view);
    case 'PodClaim':
      return keysForClaim(ns, cur as PodClaim | undefined, old as PodClaim | undefined, view);
    case 'Capture':
      return keysForCapture(ns, obj.metadata.name, view);
    case 'PodPool':
      return keysForPool(ns, cur as PodPool | undefined, old as PodPool | undefined, view);
    case 'PodClaimSet':
      return [reconcileKey(kind, ns, obj.metadata.name)];
  }
};

/**
 * A pod change reaches: its pool; the claims referencing it by spec.podName/spec.sourcePod, deleting
 * ones included (P6: a finalizer needs its pods' events), and the claim its claimed-by label names (a
 * bind in flight, a stray); the Pending claims of its pool when it is Idle; the Captures selecting it
 * or held by it.
 */
function keysForPod(ns: string, cur: Pod | undefined, old: Pod | undefined, view: RoutingView): string[] {
  const keys = new Set<string>();
  for (const p of [cur, old]) {
    if (!p) continue;
    const pool = poolOf(p);
    if (pool) keys.add(reconcileKey('PodPool', ns, pool));
    const claims = new Set<string>();
    for (const r of view.references.referencingIncludingDeleting(ns, p.metadata.name))
      claims.add(r.claim.metadata.name);
    const label = claimedBy(p);
    if (label) claims.add(label);
    for (const name of [...claims].sort()) keys.add(reconcileKey('PodClaim', ns, name));
  }
  const pool = cur && poolOf(cur);
  if (cur && pool && cur.metadata.labels?.[LABEL_STATE] === 'Idle' && !cur.metadata.deletionTimestamp) {
    // The pool's Idle pods go to its oldest waiting claims (pool/waiting-queue.ts): waking the rest
    // would only have them find every pod taken by an older claim (their own timers still run).
    for (const k of waitingClaimKeys(ns, pool, view, view.idleOf?.(ns, pool))) keys.add(k);
  }
  const name = (cur ?? old)!.metadata.name;
  for (const c of view.captures(ns)) {
    if (
      c.status?.claim?.holder.name === name ||
      (cur !== undefined && matchesSelector(cur.metadata.labels, c.spec.selector)) ||
      (old !== undefined && matchesSelector(old.metadata.labels, c.spec.selector))
    ) {
      keys.add(reconcileKey('Capture', ns, c.metadata.name));
    }
  }
  return [...keys];
}

/**
 * The claims of a pool still waiting for a pod (no podName, not deleting): all of them, or those
 * that were told to wait among the oldest `limit` (pool/waiting-queue.ts).
 */
function waitingClaimKeys(ns: string, pool: string, view: RoutingView, limit?: number): string[] {
  const names =
    limit === undefined
      ? view.references.waitingFor(ns, pool)
      : // At least one: an Idle pod the index has not counted yet still wakes the oldest claim.
        view.references.waitingToWake(ns, pool, Math.max(1, limit));
  return names.map((name) => reconcileKey('PodClaim', ns, name));
}

/**
 * A pool change reaches the pool and, when it changes what its waiting claims would say or do (the
 * wait reason: created, deleted, at maxPods or not; or more Idle pods), those claims: they say why
 * they wait from the pool's status, and would otherwise keep the old reason until their own requeue.
 */
function keysForPool(
  ns: string,
  cur: PodPool | undefined,
  old: PodPool | undefined,
  view: RoutingView,
): string[] {
  const name = (cur ?? old)!.metadata.name;
  const keys = [reconcileKey('PodPool', ns, name)];
  // Moved to another shard (a pin set, changed or removed; a pinned pool created or deleted, which
  // moves its claims between the pin's shard and the hash's): the new shard takes every claim of the
  // pool, with whatever timer the old shard held for it (the old shard drops their keys).
  if (shardPin(old) !== shardPin(cur))
    return [...keys, ...view.references.ofPool(ns, name).map((c) => reconcileKey('PodClaim', ns, c))];
  const moreIdle = (cur?.status?.idle ?? 0) > (old?.status?.idle ?? 0);
  // A changed reason is news to every waiting claim; more Idle pods only to as many of the oldest.
  if (poolWaitReason(old) !== poolWaitReason(cur)) keys.push(...waitingClaimKeys(ns, name, view));
  else if (moreIdle) keys.push(...waitingClaimKeys(ns, name, view, cur?.status?.idle ?? 0));
  return keys;
}

/**
 * A Capture change reaches the Capture and the pools whose spec.source names it (a new fenced
 * result seeds their pods; a result discarded or a capture gone stops their creates).
 */
function keysForCapture(ns: string, name: string, view: RoutingView): string[] {
  const keys = [reconcileKey('Capture', ns, name)];
  for (const p of view.pools(ns)) {
    if (p.spec.source?.captureName === name) keys.push(reconcileKey('PodPool', ns, p.metadata.name));
  }
  return keys;
}

/** A claim change reaches the claim, its pool and its claim set (old and new, should either change). */
function keysForClaim(
  ns: string,
  cur: PodClaim | undefined,
  old: PodClaim | undefined,
  view: RoutingView,
): string[] {
  const keys = new Set<string>([reconcileKey('PodClaim', ns, (cur ?? old)!.metadata.name)]);
  for (const c of [cur, old]) {
    if (!c) continue;
    if (c.spec.poolName) keys.add(reconcileKey('PodPool', ns, c.spec.poolName));
    for (const r of c.metadata.ownerReferences ?? [])
      if (r.kind === 'PodClaimSet') keys.add(reconcileKey('PodClaimSet', ns, r.name));
  }
  // A claim that stops waiting (bound, deleted, Lost for good) moves the claims behind it up a turn:
  // as many of the oldest as the pool has Idle pods are woken (pool/waiting-queue.ts).
  const pool = old?.spec.poolName;
  if (pool && waitsForPod(old) && !(cur && waitsForPod(cur))) {
    for (const k of waitingClaimKeys(ns, pool, view, view.idleOf?.(ns, pool))) keys.add(k);
  }
  return [...keys];
}
