// Event routing: which reconcile keys a change touches. Captures get their candidate pods' and
// holder's events; PodClaims get pod events through spec.podName/spec.sourcePod (P6, an index kept
// from the PodClaim informer) and, as a fallback, through the claimed-by label; PodClaimSets get
// their claims'; PodPools get their pods' (by label) and their claims' (by poolName).
import {
  type Capture,
  ClaimIndex,
  claimedBy,
  claimsForPodEvent,
  keyString,
  LABEL_POOL,
  LABEL_STATE,
  matchesSelector,
  type Pod,
  type PodClaim,
} from '@claimkit/core';

export type ReconcileKind = 'Capture' | 'PodClaim' | 'PodClaimSet' | 'PodPool';
export const RECONCILE_KINDS: ReconcileKind[] = ['Capture', 'PodClaim', 'PodClaimSet', 'PodPool'];

export const queueKey = (kind: ReconcileKind, namespace: string, name: string): string =>
  `${kind}|${namespace}/${name}`;

export function parseQueueKey(k: string): { kind: ReconcileKind; namespace: string; name: string } {
  const bar = k.indexOf('|');
  const slash = k.indexOf('/', bar);
  return {
    kind: k.slice(0, bar) as ReconcileKind,
    namespace: k.slice(bar + 1, slash),
    name: k.slice(slash + 1),
  };
}

/** pod (namespace/name) -> claims referencing it by spec.podName or spec.sourcePod (deleting ones too). */
export class PodReferenceIndex {
  private readonly byPod = new Map<string, Map<string, PodClaim>>();
  private readonly byClaim = new Map<string, string[]>();

  update(c: PodClaim | undefined, old: PodClaim | undefined): void {
    const claim = c ?? old;
    if (!claim) return;
    const ns = claim.metadata.namespace ?? '';
    const ck = keyString({ namespace: ns, name: claim.metadata.name });
    for (const pk of this.byClaim.get(ck) ?? []) {
      const m = this.byPod.get(pk);
      m?.delete(ck);
      if (m && m.size === 0) this.byPod.delete(pk);
    }
    this.byClaim.delete(ck);
    if (!c) return;
    const pods = [c.spec.podName, c.spec.sourcePod]
      .filter((p): p is string => !!p)
      .map((p) => keyString({ namespace: ns, name: p }));
    if (pods.length === 0) return;
    this.byClaim.set(ck, pods);
    for (const pk of pods) {
      let m = this.byPod.get(pk);
      if (!m) {
        m = new Map();
        this.byPod.set(pk, m);
      }
      m.set(ck, c);
    }
  }

  /** core's ClaimIndex over the claims referencing this pod (deleting ones included). */
  indexFor(namespace: string, pod: string): ClaimIndex {
    const claims = [...(this.byPod.get(keyString({ namespace, name: pod }))?.values() ?? [])];
    return new ClaimIndex(claims, { includeDeleting: true });
  }
}

export interface RoutingView {
  captures(namespace: string): Capture[];
  claims(namespace: string): PodClaim[];
  refs: PodReferenceIndex;
}

/** Keys a pod change touches (old and new object: a label removed still routes by its old value). */
export function keysForPod(view: RoutingView, pod: Pod, old: Pod | undefined): string[] {
  const ns = pod.metadata.namespace ?? '';
  const keys = new Set<string>();
  for (const p of old ? [pod, old] : [pod]) {
    const pool = p.metadata.labels?.[LABEL_POOL];
    if (pool) keys.add(queueKey('PodPool', ns, pool));
    for (const name of claimsForPodEvent(p, view.refs.indexFor(ns, p.metadata.name), claimedBy(p))) {
      keys.add(queueKey('PodClaim', ns, name));
    }
  }
  // A pool pod that is Idle now: claims of that pool still waiting for a pod can bind.
  const pool = pod.metadata.labels?.[LABEL_POOL];
  if (pool && pod.metadata.labels?.[LABEL_STATE] === 'Idle' && !pod.metadata.deletionTimestamp) {
    for (const c of view.claims(ns)) {
      if (c.spec.poolName === pool && !c.spec.podName && !c.metadata.deletionTimestamp)
        keys.add(queueKey('PodClaim', ns, c.metadata.name));
    }
  }
  for (const c of view.captures(ns)) {
    const holder = c.status?.claim?.holder.name;
    if (
      holder === pod.metadata.name ||
      matchesSelector(pod.metadata.labels, c.spec.selector) ||
      (old && matchesSelector(old.metadata.labels, c.spec.selector))
    ) {
      keys.add(queueKey('Capture', ns, c.metadata.name));
    }
  }
  return [...keys];
}

export function keysForClaim(c: PodClaim, old: PodClaim | undefined): string[] {
  const ns = c.metadata.namespace ?? '';
  const keys = new Set<string>([queueKey('PodClaim', ns, c.metadata.name)]);
  for (const x of old ? [c, old] : [c]) {
    if (x.spec.poolName) keys.add(queueKey('PodPool', ns, x.spec.poolName));
    for (const r of x.metadata.ownerReferences ?? []) {
      if (r.kind === 'PodClaimSet') keys.add(queueKey('PodClaimSet', ns, r.name));
    }
  }
  return [...keys];
}
