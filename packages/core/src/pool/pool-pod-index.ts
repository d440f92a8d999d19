// A pool's pods kept sorted as they change, so a pool reconcile costs what is not plain about the
// pool, not how many Idle pods it holds (issue 22: 37,000 warm pods). Most of a warm pool's pods are
// "quiet": Idle by label, unclaimed, not deleting, not finished, not unschedulable. A decision only
// counts those (by template hash), except where it must pick some (scale-down victims, rollout) or
// where the rest of the world makes one special (its node cannot serve, a claim references it).
// The index keeps, per pool, the quiet pods by name, their count by template hash and by node, and
// every other pod of the pool in full; a process feeds it from its pod informer's events (O(1) per
// event), and the pool's gather reads it (podpool/gather.ts). Without one, gather lists the pool.
import { LABEL_POOL } from '../api/constants.ts';
import { keyString } from '../api/meta.ts';
import { isDeleting, isPodFinished } from '../api/pod-predicates.ts';
import type { Pod } from '../api/types.ts';
import { claimedBy, stateOf } from './pods.ts';
import { isFailingToStart } from './restore.ts';
import { isUnschedulable } from './serving.ts';
import { podTemplateHash } from './template-hash.ts';

/**
 * Idle by label, unclaimed, not deleting, not finished, not unschedulable and not failing to start
 * (restore.ts: a pod that could not be restored is judged by name): a pool only counts it.
 */
export function isQuietIdle(p: Pod): boolean {
  return (
    stateOf(p) === 'Idle' &&
    claimedBy(p) === undefined &&
    !isDeleting(p) &&
    !isPodFinished(p) &&
    !isUnschedulable(p) &&
    !isFailingToStart(p)
  );
}

interface PoolEntry {
  /** The pool's pods that are not quiet, by name. */
  others: Map<string, Pod>;
  /** Quiet pods by name. */
  quiet: Map<string, Pod>;
  /** Quiet pods by template hash label ('' when absent): how many. */
  quietByHash: Map<string, number>;
  /** Quiet pods by node name ('' when unscheduled). */
  quietByNode: Map<string, Map<string, Pod>>;
}

/** One pool's pods as the index holds them (read it before the index changes again). */
export interface PoolPodsView {
  /** Pods of the pool that are not quiet (claimed, Bound, Draining, deleting, finished, ...). */
  others(): Pod[];
  readonly quietCount: number;
  /** Quiet pods labelled with template hash `hash`. */
  quietWithHash(hash: string): number;
  /** Node names quiet pods run on. */
  quietNodes(): Iterable<string>;
  quietOnNode(node: string): Iterable<Pod>;
  /** The quiet pod named `name`, if it is one. */
  quietNamed(name: string): Pod | undefined;
  quietAll(): Pod[];
}

/** Where a process's pool pods come from: the index below, fed by its pod informer. */
export interface PoolPodsSource {
  /** The pool's pods, or undefined when the source cannot answer (then gather lists them). */
  view(namespace: string, pool: string): PoolPodsView | undefined;
}

const poolKey = (namespace: string, pool: string) => keyString({ namespace, name: pool });

export class PoolPodIndex implements PoolPodsSource {
  private readonly pools = new Map<string, PoolEntry>();
  /** pod key -> the pool entry it is in and whether quiet (to remove the version stored). */
  private readonly placed = new Map<string, { pool: string; quiet: boolean; pod: Pod }>();

  /** Adds a pod or replaces the version stored under its namespace/name. */
  upsert(pod: Pod): void {
    this.remove(pod);
    const pool = pod.metadata.labels?.[LABEL_POOL];
    if (!pool) return;
    const ns = pod.metadata.namespace ?? '';
    const pk = poolKey(ns, pool);
    let e = this.pools.get(pk);
    if (!e) {
      e = { others: new Map(), quiet: new Map(), quietByHash: new Map(), quietByNode: new Map() };
      this.pools.set(pk, e);
    }
    const quiet = isQuietIdle(pod);
    const name = pod.metadata.name;
    if (quiet) {
      e.quiet.set(name, pod);
      const hash = podTemplateHash(pod) ?? '';
      e.quietByHash.set(hash, (e.quietByHash.get(hash) ?? 0) + 1);
      const node = pod.spec.nodeName ?? '';
      let onNode = e.quietByNode.get(node);
      if (!onNode) {
        onNode = new Map();
        e.quietByNode.set(node, onNode);
      }
      onNode.set(name, pod);
    } else e.others.set(name, pod);
    this.placed.set(keyString({ namespace: ns, name }), { pool: pk, quiet, pod });
  }

  /** Forgets a pod (by namespace/name). */
  remove(pod: { metadata: { namespace?: string; name: string } }): void {
    const key = keyString({ namespace: pod.metadata.namespace ?? '', name: pod.metadata.name });
    const at = this.placed.get(key);
    if (!at) return;
    this.placed.delete(key);
    const e = this.pools.get(at.pool)!;
    const name = at.pod.metadata.name;
    if (at.quiet) {
      e.quiet.delete(name);
      const hash = podTemplateHash(at.pod) ?? '';
      const n = (e.quietByHash.get(hash) ?? 1) - 1;
      if (n > 0) e.quietByHash.set(hash, n);
      else e.quietByHash.delete(hash);
      const node = at.pod.spec.nodeName ?? '';
      const onNode = e.quietByNode.get(node);
      onNode?.delete(name);
      if (onNode?.size === 0) e.quietByNode.delete(node);
    } else e.others.delete(name);
    if (e.quiet.size === 0 && e.others.size === 0) this.pools.delete(at.pool);
  }

  /** Replaces the whole content (a relist). */
  replace(pods: Iterable<Pod>): void {
    this.pools.clear();
    this.placed.clear();
    for (const p of pods) this.upsert(p);
  }

  view(namespace: string, pool: string): PoolPodsView {
    const e = this.pools.get(poolKey(namespace, pool));
    if (!e) return EMPTY_VIEW;
    return {
      others: () => [...e.others.values()],
      quietCount: e.quiet.size,
      quietWithHash: (hash) => e.quietByHash.get(hash) ?? 0,
      quietNodes: () => e.quietByNode.keys(),
      quietOnNode: (node) => e.quietByNode.get(node)?.values() ?? [],
      quietNamed: (name) => e.quiet.get(name),
      quietAll: () => [...e.quiet.values()],
    };
  }
}

const EMPTY_VIEW: PoolPodsView = {
  others: () => [],
  quietCount: 0,
  quietWithHash: () => 0,
  quietNodes: () => [],
  quietOnNode: () => [],
  quietNamed: () => undefined,
  quietAll: () => [],
};
