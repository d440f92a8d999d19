// Which pool pods can serve a claim: Ready, not deleting, on a node that is Ready and not cordoned.
// Node health comes from the cache as a set of node names known to be unable to serve. A node the
// cache does not know counts as able to serve: the pod's own Ready condition is the primary signal
// (the node lifecycle controller marks pods of a dead node NotReady), and a Node missing from the
// cache is either cache lag or a deleted node whose pods pod-GC removes; refusing to bind there
// would stop every pool whenever Node reads are unavailable.
import { getOrUndefined } from '../api/errors.ts';
import type { Reader } from '../api/ports.ts';
import type { Node, Pod } from '../api/types.ts';

/** Node names known (from the cache) to be NotReady or cordoned. */
export type UnservableNodes = ReadonlySet<string>;

export const NO_UNSERVABLE_NODES: UnservableNodes = new Set();

/** A node serves new claims when it is Ready and not cordoned (spec.unschedulable). */
export function nodeCanServe(n: Node): boolean {
  if (n.spec?.unschedulable) return false;
  return (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The pod sits on a node known to be unable to serve. */
export function isStranded(p: Pod, unservable: UnservableNodes): boolean {
  const node = p.spec.nodeName;
  return node !== undefined && node !== '' && unservable.has(node);
}

/** Pending because the scheduler found no node (PodScheduled=False, reason Unschedulable). */
export function isUnschedulable(p: Pod): boolean {
  return (
    (p.status?.phase ?? 'Pending') === 'Pending' &&
    (p.status?.conditions ?? []).some(
      (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
    )
  );
}

/**
 * Node verdicts read from the cache once per node name, for a pass that checks pods as it goes (a
 * claim's gather looks at a window of its pool, not the whole pool). Same rules as above: a node the
 * cache does not have counts as able to serve.
 */
export class ServingNodes {
  private readonly cache: Reader;
  private readonly canServe = new Map<string, boolean>();
  private readonly out = new Set<string>();

  constructor(cache: Reader) {
    this.cache = cache;
  }

  /** Reads the pod's node (once per name) and says whether the pod is stranded there. */
  async isStranded(p: Pod): Promise<boolean> {
    const name = p.spec.nodeName;
    if (!name) return false;
    let ok = this.canServe.get(name);
    if (ok === undefined) {
      const n = await getOrUndefined(this.cache.get('Node', { namespace: '', name }));
      ok = !n || nodeCanServe(n);
      this.canServe.set(name, ok);
      if (!ok) this.out.add(name);
    }
    return !ok;
  }

  /** The nodes read so far that cannot serve. */
  get unservable(): Set<string> {
    return this.out;
  }
}

/**
 * Reads (from the cache) these nodes (names, e.g. those a pool's Idle pods run on) and returns those
 * that cannot serve. A node the cache does not have counts as able to serve (see above).
 */
export async function readUnservableNodes(cache: Reader, nodeNames: Iterable<string>): Promise<Set<string>> {
  const out = new Set<string>();
  for (const name of nodeNames) {
    const n = await getOrUndefined(cache.get('Node', { namespace: '', name }));
    if (n && !nodeCanServe(n)) out.add(name);
  }
  return out;
}
