// The versions of an object this controller has itself replaced, so a reconcile does not decide on
// them. After a bind the claim passes through two versions of ours (spec, then status); the watch
// event for the first often arrives — and enqueues the claim — before the second's. Deciding on that
// cache would patch the status again (a redundant write) or race the informer. client-go
// controllers solve the same problem with "expectations"; this is the narrow version: skip only
// when the cache shows a version we know we superseded, and only for a while.
import { intercept } from '../api/interceptor.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Client } from '../api/ports.ts';
import type { AnyObject, Kind } from '../api/types.ts';

/** How long a record of our own writes may hold a key back if its watch event never comes. */
export const OWN_WRITES_TTL_MS = 5_000;

interface OwnWrite {
  /** Versions that a later write of ours replaced (including the one the decision was made on). */
  superseded: Set<string>;
  at: number;
}

export class OwnWrites {
  private readonly byKey = new Map<string, OwnWrite>();
  private readonly now: () => number;
  private readonly ttlMs: number;

  /** `ttlMs` is a parameter so the simulator can be handed a skip that never expires (a bug, as data). */
  constructor(now: () => number, ttlMs = OWN_WRITES_TTL_MS) {
    this.now = now;
    this.ttlMs = ttlMs;
  }

  /** How long a record holds a key back at most. */
  get ttl(): number {
    return this.ttlMs;
  }

  /**
   * True when the cached version is one we replaced ourselves (the newer one is on its way to the
   * cache, and its event will enqueue the key again). Forgets the key otherwise.
   */
  cacheIsBehind(key: string, cachedResourceVersion: string | undefined): boolean {
    const r = this.byKey.get(key);
    if (!r) return false;
    if (
      cachedResourceVersion !== undefined &&
      r.superseded.has(cachedResourceVersion) &&
      this.now() - r.at < this.ttlMs
    ) {
      return true;
    }
    this.byKey.delete(key);
    return false;
  }

  /** Records a reconcile's writes to its own object: every version but the last is superseded. */
  record(key: string, versionBefore: string | undefined, written: string[]): void {
    if (written.length === 0) return;
    const superseded = new Set(written.slice(0, -1));
    if (versionBefore !== undefined) superseded.add(versionBefore);
    // A write that changed nothing answers with the version it found: that one is the newest, and
    // no watch event will come for it.
    superseded.delete(written.at(-1)!);
    if (superseded.size === 0) {
      this.byKey.delete(key);
      return;
    }
    this.byKey.set(key, { superseded, at: this.now() });
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }

  get size(): number {
    return this.byKey.size;
  }
}

/**
 * A client that reports the resourceVersion of every successful write to one object (kind + key);
 * everything else passes through untouched.
 */
export function recordingWritesTo(client: Client, kind: Kind, key: ObjectKey, written: string[]): Client {
  return intercept(client, {
    request: async (call, next) => {
      const result = await next();
      if (
        call.verb !== 'get' &&
        call.verb !== 'list' &&
        call.kind === kind &&
        (call.key.namespace ?? '') === (key.namespace ?? '') &&
        call.key.name === key.name
      ) {
        const rv = (result as AnyObject | undefined)?.metadata?.resourceVersion;
        if (rv !== undefined) written.push(rv);
      }
      return result;
    },
  });
}
