// Create/delete expectations per pool (client-go's UIDTrackingControllerExpectations, used by the
// ReplicaSet controller): a pool decides no new creates or deletes while pods it created or deleted
// are not yet visible in its cache, so a lagging cache never makes it create (or delete) twice.
// Observation is by the cache's contents at reconcile time (a created name shows up, a deleted UID
// is gone or deleting), plus informer delete events where a process has them (podDeleted): both
// are what the informer saw, and neither needs an API request. A reconcile looks up only the names
// pending (`pendingNames`), not the whole pool: its cost follows the pool's writes, not its size.

import { isDeleting } from '../api/pod-predicates.ts';
import type { Pod } from '../api/types.ts';

/**
 * How long an unobserved expectation holds a pool. client-go uses 5 minutes; a create whose outcome
 * is unknown (a timeout) or a pod created and deleted before the cache saw it is only observed by
 * expiry, and holding a pool's scale-up for 5 minutes on one timeout is too long: 60 s.
 */
export const EXPECTATIONS_TTL_MS = 60_000;

/** What a pool's decision reads: plain data (decide stays pure). */
export interface PendingExpectations {
  creates: number;
  deletes: number;
  /** When the oldest pending expectation expires (ms since epoch); undefined when none is pending. */
  expiresAt?: number;
}

export const NO_PENDING: PendingExpectations = Object.freeze({ creates: 0, deletes: 0 });

interface PoolEntry {
  /** Created pod names not yet seen in the cache -> expiry. */
  creates: Map<string, number>;
  /** Creates whose outcome is unknown (the request timed out): only expiry observes them. */
  unknownCreates: number[];
  /** Deleted pod UIDs still shown (not deleting) by the cache -> the pod's name and expiry. */
  deletes: Map<string, { name: string; expiresAt: number }>;
}

export class PoolExpectations {
  private readonly pools = new Map<string, PoolEntry>();
  private readonly ttlMs: number;

  constructor(ttlMs = EXPECTATIONS_TTL_MS) {
    this.ttlMs = ttlMs;
  }

  private entry(poolUid: string): PoolEntry {
    let e = this.pools.get(poolUid);
    if (!e) {
      e = { creates: new Map(), unknownCreates: [], deletes: new Map() };
      this.pools.set(poolUid, e);
    }
    return e;
  }

  /** A create succeeded: the pool waits until its cache shows `name`. */
  created(poolUid: string, name: string, now: number): void {
    this.entry(poolUid).creates.set(name, now + this.ttlMs);
  }

  /** A create's outcome is unknown (timeout, connection lost): assume it may have landed. */
  createUnknown(poolUid: string, now: number): void {
    this.entry(poolUid).unknownCreates.push(now + this.ttlMs);
  }

  /** A delete of pod `name` was issued (or its outcome is unknown): the pool waits until its cache no longer shows `uid` live. */
  deleting(poolUid: string, uid: string, name: string, now: number): void {
    this.entry(poolUid).deletes.set(uid, { name, expiresAt: now + this.ttlMs });
  }

  /** A delete certainly did not happen (precondition failed): nothing to wait for. */
  deleteFailed(poolUid: string, uid: string): void {
    this.pools.get(poolUid)?.deletes.delete(uid);
  }

  /** Informer delete event: a created pod that came and went is observed too. */
  podDeleted(pod: Pod): void {
    for (const ref of pod.metadata.ownerReferences ?? []) {
      if (ref.kind !== 'PodPool') continue;
      const e = this.pools.get(ref.uid);
      e?.creates.delete(pod.metadata.name);
      if (pod.metadata.uid) e?.deletes.delete(pod.metadata.uid);
    }
  }

  /** The pool is gone: forget it. */
  forget(poolUid: string): void {
    this.pools.delete(poolUid);
  }

  /** The pod names whose cache state the pool's pending expectations wait on (none: nothing pending). */
  pendingNames(poolUid: string): string[] {
    const e = this.pools.get(poolUid);
    if (!e) return [];
    return [...e.creates.keys(), ...[...e.deletes.values()].map((d) => d.name)];
  }

  /**
   * Observes the pool's pods as the cache shows them: `shown` holds, of the `pendingNames`, those the
   * cache has as pods of this pool (deleting ones included). Returns what is still pending; expired
   * expectations are dropped.
   */
  observe(poolUid: string, shown: ReadonlyMap<string, Pod>, now: number): PendingExpectations {
    const e = this.pools.get(poolUid);
    if (!e) return NO_PENDING;
    for (const [name, exp] of e.creates) if (shown.has(name) || exp <= now) e.creates.delete(name);
    for (const [uid, d] of e.deletes) {
      const p = shown.get(d.name);
      const live = p !== undefined && p.metadata.uid === uid && !isDeleting(p);
      if (!live || d.expiresAt <= now) e.deletes.delete(uid);
    }
    e.unknownCreates = e.unknownCreates.filter((exp) => exp > now);
    const creates = e.creates.size + e.unknownCreates.length;
    const deletes = e.deletes.size;
    if (creates === 0 && deletes === 0) {
      this.pools.delete(poolUid);
      return NO_PENDING;
    }
    const expiresAt = Math.min(
      ...e.creates.values(),
      ...e.unknownCreates,
      ...[...e.deletes.values()].map((d) => d.expiresAt),
    );
    return { creates, deletes, expiresAt };
  }
}
