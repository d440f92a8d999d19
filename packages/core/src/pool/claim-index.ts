// Which claim references which pod, through its binding's podName and sourcePod (P1, P6): the one index
// that the reconcilers, event routing (controller and simulator) and the webhook all use.
//
// The one rule for deleting claims: a deleting claim still *references* its pods (its finalizer needs
// their events, P3 and P6) but *holds* none of them against a live claim (P7: a finalizer in the middle
// of a migration never blocks the claim taking its pod over). The index keeps deleting claims; each
// query says which of the two views it answers.
import { bindingOf, podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { keyString } from '../api/meta.ts';
import type { PodClaim } from '../api/types.ts';
import { isLostForGood } from './lost-policy.ts';
import { WaitingQueue } from './waiting-queue.ts';

/** The part of a PodClaim the index reads (the webhook feeds it objects it parsed itself). */
export interface ReferencingClaim {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    deletionTimestamp?: string;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
  };
  /** spec.podName and spec.sourcePod: a legacy claim's binding (api/claim-binding.ts). */
  spec: { podName?: string; sourcePod?: string; poolName?: string };
  status?: {
    phase?: string;
    podName?: string | null;
    sourcePod?: string | null;
    nodeName?: string | null;
    podUID?: string | null;
  };
}

export interface PodReference<C extends ReferencingClaim = PodClaim> {
  claim: C;
  field: 'podName' | 'sourcePod';
}

/** The rule above: only a claim that is not being deleted holds the pods it references. */
function holdsReferencedPods(claim: ReferencingClaim): boolean {
  return !claim.metadata.deletionTimestamp;
}

/**
 * A claim of a pool still waiting for a pod: no podName yet, not being deleted, and not Lost for
 * good (lostPolicy Fail: it never binds again, so it must not hold a turn in its pool's queue).
 */
export function waitsForPod(claim: ReferencingClaim): boolean {
  return (
    !!claim.spec.poolName &&
    !podNameOf(claim) &&
    !claim.metadata.deletionTimestamp &&
    !isLostForGood(claim as unknown as PodClaim)
  );
}

const claimKey = (c: { metadata: { namespace?: string; name: string } }) =>
  keyString({ namespace: c.metadata.namespace ?? '', name: c.metadata.name });

export class ClaimIndex<C extends ReferencingClaim = PodClaim> {
  /**
   * pod key -> the references to the pod, claim by claim in the order they were indexed (each claim's
   * podName first, then sourcePod). A flat array, not a map per pod: a pod has one or two.
   */
  private readonly byPod = new Map<string, PodReference<C>[]>();
  private readonly claims = new Map<string, C>();
  /** pool key -> its claims waiting for a pod, oldest first (an Idle pod or a pool change wakes them). */
  private readonly waiting = new Map<string, WaitingQueue>();
  /** claim key -> its UID and when this index first saw it (the waiting order's tie-break). */
  private readonly firstSeen = new Map<string, { uid: string | undefined; seq: number }>();
  private seq = 0;

  /** An index over `claims`; later versions of a claim (same namespace/name) replace earlier ones. */
  constructor(claims: Iterable<C> = []) {
    for (const c of claims) this.upsert(c);
  }

  get size(): number {
    return this.claims.size;
  }

  /** Adds a claim or replaces the version indexed under its namespace/name. */
  upsert(claim: C): void {
    const ck = claimKey(claim);
    this.removeKey(ck);
    this.claims.set(ck, claim);
    const ns = claim.metadata.namespace ?? '';
    const { podName, sourcePod } = bindingOf(claim);
    if (podName) this.add(ns, podName, { claim, field: 'podName' });
    if (sourcePod) this.add(ns, sourcePod, { claim, field: 'sourcePod' });
    let seen = this.firstSeen.get(ck);
    if (!seen || seen.uid !== claim.metadata.uid) {
      seen = { uid: claim.metadata.uid, seq: this.seq++ };
      this.firstSeen.set(ck, seen);
    }
    if (waitsForPod(claim)) {
      const pk = keyString({ namespace: ns, name: claim.spec.poolName! });
      let queue = this.waiting.get(pk);
      if (!queue) {
        queue = new WaitingQueue();
        this.waiting.set(pk, queue);
      }
      const parked = claim.status?.phase === 'Pending' || claim.status?.phase === 'Lost';
      queue.add(claim.metadata.name, claim.metadata.uid, claim.metadata.creationTimestamp, seen.seq, parked);
    }
  }

  /** Forgets a claim (by namespace/name). */
  remove(claim: { metadata: { namespace?: string; name: string } }): void {
    const ck = claimKey(claim);
    this.removeKey(ck);
    this.firstSeen.delete(ck);
  }

  /** Replaces the whole content (a relist); claims still there keep their place in the waiting order. */
  replace(claims: Iterable<C>): void {
    this.claims.clear();
    this.byPod.clear();
    this.waiting.clear();
    const seen = new Map(this.firstSeen);
    this.firstSeen.clear();
    const list = [...claims];
    for (const c of list) {
      const s = seen.get(claimKey(c));
      if (s && s.uid === c.metadata.uid) this.firstSeen.set(claimKey(c), s);
    }
    for (const c of list) this.upsert(c);
  }

  /** Every claim referencing the pod, deleting ones included: the claims a pod event concerns (P6). */
  referencingIncludingDeleting(namespace: string, pod: string): PodReference<C>[] {
    const refs = this.byPod.get(keyString({ namespace, name: pod }));
    return refs ? [...refs] : [];
  }

  /** The claims holding the pod: referencing it and not being deleted (normally zero or one). */
  referencing(namespace: string, pod: string): PodReference<C>[] {
    return this.referencingIncludingDeleting(namespace, pod).filter((r) => holdsReferencedPods(r.claim));
  }

  /** A claim other than `self` holding this pod, if any. */
  otherReference(
    namespace: string,
    pod: string,
    self: { metadata: { uid?: string } },
  ): PodReference<C> | undefined {
    return this.referencing(namespace, pod).find((r) => r.claim.metadata.uid !== self.metadata.uid);
  }

  /**
   * The names of the pool's claims waiting for a pod (no spec.podName, not being deleted), oldest
   * first (waiting-queue.ts), at most `limit` of them, without reading every claim of the namespace:
   * asked on every Idle pod's event.
   */
  waitingFor(namespace: string, pool: string, limit?: number): readonly string[] {
    return this.waiting.get(keyString({ namespace, name: pool }))?.names(limit) ?? [];
  }

  /**
   * The claims to wake when `limit` of the pool's oldest waiting claims can be served (an Idle pod
   * each): those among them that were told to wait (status Pending or Lost). The others have not
   * been reconciled since they were created: their creation queued them already.
   */
  waitingToWake(namespace: string, pool: string, limit: number): readonly string[] {
    return this.waiting.get(keyString({ namespace, name: pool }))?.parkedWithin(limit) ?? [];
  }

  /** How many claims of the pool wait for a pod, without listing them. */
  waitingCount(namespace: string, pool: string): number {
    return this.waiting.get(keyString({ namespace, name: pool }))?.size ?? 0;
  }

  /**
   * How many of the pool's waiting claims are older than `name` and have no bind in flight
   * (`inFlight`: claim UIDs): the claim's turn (waiting-queue.ts). Undefined when it does not wait.
   */
  waitingAhead(
    namespace: string,
    pool: string,
    name: string,
    inFlight: ReadonlySet<string>,
  ): number | undefined {
    return this.waiting.get(keyString({ namespace, name: pool }))?.ahead(name, inFlight);
  }

  /**
   * The names of every claim of the pool, deleting ones included. Reads every claim: asked only when
   * a pool moves to another shard (loop/shard.ts), which is rare.
   */
  ofPool(namespace: string, pool: string): string[] {
    const out: string[] = [];
    for (const c of this.claims.values())
      if (c.spec.poolName === pool && (c.metadata.namespace ?? '') === namespace) out.push(c.metadata.name);
    return out;
  }

  /** Whether some claim holds this pod. */
  isReferenced(namespace: string, pod: string): boolean {
    // Asked for every Idle pod of a pool on each bind: no arrays built for the common "no".
    if (this.claims.size === 0) return false;
    const refs = this.byPod.get(keyString({ namespace, name: pod }));
    if (!refs) return false;
    for (const r of refs) if (holdsReferencedPods(r.claim)) return true;
    return false;
  }

  private add(ns: string, pod: string, ref: PodReference<C>): void {
    const pk = keyString({ namespace: ns, name: pod });
    const refs = this.byPod.get(pk);
    if (refs) refs.push(ref);
    else this.byPod.set(pk, [ref]);
  }

  private removeKey(ck: string): void {
    const old = this.claims.get(ck);
    if (!old) return;
    this.claims.delete(ck);
    const ns = old.metadata.namespace ?? '';
    if (waitsForPod(old)) {
      const pk = keyString({ namespace: ns, name: old.spec.poolName! });
      const queue = this.waiting.get(pk);
      queue?.remove(old.metadata.name);
      if (queue && queue.size === 0) this.waiting.delete(pk);
    }
    for (const pod of new Set([podNameOf(old), sourcePodOf(old)])) {
      if (!pod) continue;
      const pk = keyString({ namespace: ns, name: pod });
      const refs = this.byPod.get(pk);
      if (!refs) continue;
      // The indexed version of the claim is `old`: its references are the ones holding it.
      const kept = refs.filter((r) => r.claim !== old);
      if (kept.length === 0) this.byPod.delete(pk);
      else if (kept.length !== refs.length) this.byPod.set(pk, kept);
    }
  }
}
