// Pods this process is binding, or has just bound while its cache still shows them Idle: a claim's
// candidate window leaves them out, so the concurrent binds of one process do not race each other
// for one pod (every lost race is a 409, a re-read and a second try). A process's memory and never a
// safety device: the pod's CAS decides who binds; a hold only steers which pod a claim tries.
import type { Pod, PodClaim } from '../api/types.ts';

/**
 * How long a hold outlives its bind when the cache never shows the pod change (a bind whose answer
 * was lost, a pod no claim looks at again). Informer lag is well under a second when healthy, but
 * seconds at the API server's limit: a hold that ended before the cache showed its bind sent the
 * next claim to the same pod (a 409 each time, issue 41). A bind that lands or fails ends its hold.
 */
export const BIND_HOLD_TTL_MS = 30_000;

interface Hold {
  /** The claim binding the pod (its UID, or its name when it has none). */
  claim: string;
  /** The pod's resourceVersion when the bind was decided: any later version ends the hold. */
  resourceVersion: string | undefined;
  expiresAt: number;
}

/** Who holds a pod: the claim's UID (a claim re-created under its name is another holder). */
export const holderOf = (c: PodClaim): string =>
  c.metadata.uid ?? `${c.metadata.namespace ?? ''}/${c.metadata.name}`;

const podKey = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;

export class BindsInFlight {
  /** Pod key -> hold, in the order the holds were taken (expiry order: one TTL for all). */
  private readonly holds = new Map<string, Hold>();
  private readonly ttlMs: number;

  constructor(ttlMs = BIND_HOLD_TTL_MS) {
    this.ttlMs = ttlMs;
  }

  /** `claim` is about to write its bind of `pod`, decided from the pod as the cache showed it. */
  hold(pod: Pod, claim: string, now: number): void {
    this.forgetExpired(now);
    const k = podKey(pod);
    this.holds.delete(k); // re-inserted last: the map stays in expiry order
    this.holds.set(k, { claim, resourceVersion: pod.metadata.resourceVersion, expiresAt: now + this.ttlMs });
  }

  /**
   * The cache shows `pod` now (the Pod informer's handler): a hold decided on another version of it
   * ends (the bind, or anyone's write, is seen), as does one on a pod that is gone.
   */
  observe(pod: Pod, gone = false): void {
    const k = podKey(pod);
    const h = this.holds.get(k);
    if (h && (gone || h.resourceVersion !== pod.metadata.resourceVersion)) this.holds.delete(k);
  }

  /** The bind's pod write failed: the pod is anyone's again (if `claim` still holds it). */
  release(pod: Pod, claim: string): void {
    const k = podKey(pod);
    if (this.holds.get(k)?.claim === claim) this.holds.delete(k);
  }

  /**
   * Whether a bind of another claim holds `pod` as the cache shows it now. A pod whose version moved
   * on (the bind seen, or anyone's write since) or whose hold expired is free, and the hold forgotten.
   */
  heldByOther(pod: Pod, claim: string, now: number): boolean {
    const k = podKey(pod);
    const h = this.holds.get(k);
    if (!h) return false;
    if (h.expiresAt <= now || h.resourceVersion !== pod.metadata.resourceVersion) {
      this.holds.delete(k);
      return false;
    }
    return h.claim !== claim;
  }

  /**
   * The claims (holderOf) whose binds hold a pod now: they are not waiting their turn any more
   * (waiting-queue.ts), whatever the cache still shows of them.
   */
  holders(now: number): Set<string> {
    this.forgetExpired(now);
    const out = new Set<string>();
    for (const h of this.holds.values()) out.add(h.claim);
    return out;
  }

  /** Holds not yet forgotten (metrics and tests). */
  size(): number {
    return this.holds.size;
  }

  /** Expired holds are at the front (insertion order is expiry order): O(expired). */
  private forgetExpired(now: number): void {
    for (const [k, h] of this.holds) {
      if (h.expiresAt > now) return;
      this.holds.delete(k);
    }
  }
}

/** The candidates no other claim's bind holds (a claim taking its turn waits for the rest). */
export function candidatesNotHeld(
  candidates: Pod[],
  binds: BindsInFlight | undefined,
  claim: string,
  now: number,
): Pod[] {
  if (!binds || binds.size() === 0) return candidates;
  return candidates.filter((p) => !binds.heldByOther(p, claim, now));
}

/**
 * The candidates no other claim's bind holds; all of them when every one is held (a claim then tries
 * as it would without holds, rather than waiting on binds that may fail).
 */
export function unheldCandidates(
  candidates: Pod[],
  binds: BindsInFlight | undefined,
  claim: string,
  now: number,
): Pod[] {
  const free = candidatesNotHeld(candidates, binds, claim, now);
  return free.length > 0 ? free : candidates;
}
