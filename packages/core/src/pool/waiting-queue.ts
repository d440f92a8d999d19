// A pool's claims waiting for a pod, oldest first: the order a pool serves them in. Oldest is by
// creationTimestamp, then by when this process first saw the claim (a timestamp has whole seconds,
// and claims created in one second arrive in the order the API server stored them). A new Idle pod
// wakes the oldest claims only, and the k-th oldest claim without a bind in flight takes the k-th
// oldest Idle pod nobody's bind holds: concurrent binds of one process never race for one pod, and a
// pool under more demand than it has pods hands them out in arrival order instead of to whichever
// claim's reconcile happened to run first (issue 41: a quarter of the writes at the API server's
// limit were 409s from claims racing for each new pod).
import { parseTimestamp } from '../api/meta.ts';

interface Entry {
  name: string;
  uid: string | undefined;
  /**
   * The claim was reconciled and told to wait (its status says Pending or Lost): only such a claim
   * needs waking when a pod frees up. One without a status is still queued from its creation.
   */
  parked: boolean;
  /** creationTimestamp, ms (0 when absent). */
  t: number;
  /** First-seen order among claims with the same timestamp. */
  seq: number;
}

const before = (a: Entry, b: Entry) => a.t < b.t || (a.t === b.t && a.seq < b.seq);

export class WaitingQueue {
  /** Oldest first. */
  private readonly entries: Entry[] = [];
  /** The parked ones, oldest first. */
  private readonly parked: Entry[] = [];
  private readonly byName = new Map<string, Entry>();
  private readonly byUid = new Map<string, Entry>();

  get size(): number {
    return this.entries.length;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  add(
    name: string,
    uid: string | undefined,
    creationTimestamp: string | undefined,
    seq: number,
    parked = false,
  ): void {
    this.remove(name);
    const e: Entry = { name, uid, parked, t: parseTimestamp(creationTimestamp) ?? 0, seq };
    this.entries.splice(this.positionOf(e), 0, e);
    if (parked) this.parked.splice(positionIn(this.parked, e), 0, e);
    this.byName.set(name, e);
    if (uid !== undefined) this.byUid.set(uid, e);
  }

  remove(name: string): void {
    const e = this.byName.get(name);
    if (!e) return;
    removeFrom(this.entries, e);
    if (e.parked) removeFrom(this.parked, e);
    this.byName.delete(name);
    if (e.uid !== undefined && this.byUid.get(e.uid) === e) this.byUid.delete(e.uid);
  }

  /** The names, oldest first; at most `limit` of them. */
  names(limit = Number.POSITIVE_INFINITY): string[] {
    const n = Math.min(this.entries.length, Math.max(0, limit));
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.entries[i]!.name);
    return out;
  }

  /**
   * The parked claims among the oldest `limit` (the ones a freed pod can serve that are not queued
   * already), oldest first: O(k log n) for k of them, whatever the queue's length.
   */
  parkedWithin(limit: number): string[] {
    const out: string[] = [];
    for (const e of this.parked) {
      if (this.positionOf(e) >= limit) break;
      out.push(e.name);
    }
    return out;
  }

  /**
   * How many claims wait ahead of `name` and have no bind in flight (`inFlight`: claim UIDs whose
   * binds this process is writing): the claim's turn among the pool's free Idle pods. Undefined when
   * the claim is not waiting here. O(log n + |inFlight|).
   */
  ahead(name: string, inFlight: ReadonlySet<string>): number | undefined {
    const e = this.byName.get(name);
    if (!e) return undefined;
    let n = this.positionOf(e);
    for (const uid of inFlight) {
      const o = this.byUid.get(uid);
      if (o && o !== e && before(o, e)) n--;
    }
    return n;
  }

  /** Where `e` is (or would go): the number of entries before it. */
  private positionOf(e: Entry): number {
    return positionIn(this.entries, e);
  }
}

/** The number of entries of sorted `xs` before `e`. */
function positionIn(xs: readonly Entry[], e: Entry): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(xs[mid]!, e)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function removeFrom(xs: Entry[], e: Entry): void {
  const at = positionIn(xs, e);
  xs.splice(xs[at] === e ? at : xs.indexOf(e), 1);
}
