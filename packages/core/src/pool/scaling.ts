// How many Idle pods a pool creates or deletes, from its cache view alone (no live list):
// - pods it created or deleted but its cache does not show yet (expectations) hold every new
//   create and delete, so a lagging cache never creates twice (the ReplicaSet pattern);
// - terminating pods count against maxPods (they still hold a node's resources);
// - Idle pods that are not Ready yet, unschedulable ones included, count toward the Idle target as
//   "in progress": a pod the scheduler cannot place is held, not multiplied;
// - Idle pods stranded on a NotReady or cordoned node do not count: a replacement is created
//   first, and the stranded pod is deleted once the target is met without it (or at once when
//   maxPods leaves no room for the replacement).
// Deletes carry the pod's UID and resourceVersion, so a concurrent bind wins.
import { keyOf, parseTimestamp } from '../api/meta.ts';
import type { Pod, PodPool } from '../api/types.ts';
import { isDeleting } from '../capture/liveness.ts';
import { type EventSpec, event, type Write } from '../reconcile/decision.ts';
import type { PendingExpectations } from './expectations.ts';
import { claimedBy, stateOf } from './pods.ts';
import { isStranded, isUnschedulable, type UnservableNodes } from './serving.ts';

export interface ScalingInput {
  pool: PodPool;
  /** Every pod of the pool the cache shows, terminating ones included. */
  pods: Pod[];
  /** Claims of the pool waiting for a pod: one more Idle pod each. */
  pendingClaims: number;
  expectations: PendingExpectations;
  unservable: UnservableNodes;
  now: number;
  /** Creates to keep; default: a fresh pod from the pool's template. */
  newPod: (pool: PodPool) => Pod;
}

export interface ScalingDecision {
  writes: Write[];
  events: EventSpec[];
  /** Set while expectations hold the pool: check again when the oldest expires. */
  requeueAfterMs?: number;
  /** Why the pool holds, when it does (this replica's own state: never written to the shared status). */
  held?: string;
  desiredIdle: number;
  unschedulable: number;
  stranded: number;
}

const isIdle = (p: Pod): boolean => stateOf(p) === 'Idle' && claimedBy(p) === undefined && !isDeleting(p);

/** Newest first (not-yet-warm pods go before warm ones), then by name, so replicas pick the same victims. */
function newestFirst(a: Pod, b: Pod): number {
  return (
    (parseTimestamp(b.metadata.creationTimestamp) ?? 0) -
      (parseTimestamp(a.metadata.creationTimestamp) ?? 0) || (a.metadata.name < b.metadata.name ? 1 : -1)
  );
}

function deleteWrite(p: Pod, why: string): Write {
  return {
    op: 'delete',
    kind: 'Pod',
    key: keyOf(p),
    preconditions: { uid: p.metadata.uid!, resourceVersion: p.metadata.resourceVersion! },
    why,
  };
}

export function decideScaling(x: ScalingInput): ScalingDecision {
  const { pool } = x;
  const live = x.pods.filter((p) => !isDeleting(p));
  const terminating = x.pods.length - live.length;
  const idle = live.filter(isIdle);
  const stranded = idle.filter((p) => isStranded(p, x.unservable));
  const healthy = idle.filter((p) => !isStranded(p, x.unservable));
  const held = live.length - idle.length;
  const desiredIdle = Math.min(pool.spec.minIdle + x.pendingClaims, Math.max(0, pool.spec.maxPods - held));
  const base = {
    desiredIdle,
    unschedulable: idle.filter(isUnschedulable).length,
    stranded: stranded.length,
  };
  const writes: Write[] = [];
  const events: EventSpec[] = [];

  const pending = x.expectations.creates + x.expectations.deletes;
  if (pending > 0) {
    const wait = Math.max(1000, (x.expectations.expiresAt ?? x.now) - x.now);
    return {
      ...base,
      writes,
      events,
      requeueAfterMs: wait,
      held: `waiting for the cache to show ${x.expectations.creates} create(s) and ${x.expectations.deletes} delete(s)`,
    };
  }

  const room = Math.max(0, pool.spec.maxPods - x.pods.length);
  const need = desiredIdle - healthy.length;
  if (need > 0) {
    const n = Math.min(need, room);
    for (let i = 0; i < n; i++)
      writes.push({ op: 'create', object: x.newPod(pool), why: `keep ${desiredIdle} Idle` });
    if (n > 0) {
      const terms = terminating > 0 ? ` (${terminating} terminating count against maxPods)` : '';
      events.push(
        event(pool, 'Normal', 'ScaledUp', `creating ${n} pod(s) to keep ${desiredIdle} Idle${terms}`),
      );
    }
    // No room for a replacement: a stranded pod makes room (it cannot serve anyway).
    const freed = [...stranded].sort(newestFirst).slice(0, Math.max(0, need - n));
    for (const p of freed)
      writes.push(deleteWrite(p, `replace Idle pod ${p.metadata.name} on node ${p.spec.nodeName} (no room)`));
    if (freed.length > 0)
      events.push(
        event(pool, 'Normal', 'StrandedReplaced', `deleting ${freed.length} Idle pod(s) on unservable nodes`),
      );
    return { ...base, writes, events };
  }
  // The target is met by pods that can serve: stranded pods go first, then the newest extra ones.
  const extraHealthy = Math.max(
    healthy.length - desiredIdle,
    live.length - stranded.length - pool.spec.maxPods,
    0,
  );
  const victims = [...stranded.sort(newestFirst), ...healthy.sort(newestFirst).slice(0, extraHealthy)];
  for (const v of victims) {
    const why = isStranded(v, x.unservable)
      ? `replace Idle pod ${v.metadata.name} on node ${v.spec.nodeName}`
      : `scale down Idle pods to ${desiredIdle}`;
    writes.push(deleteWrite(v, why));
  }
  if (stranded.length > 0)
    events.push(
      event(
        pool,
        'Normal',
        'StrandedReplaced',
        `deleting ${stranded.length} Idle pod(s) on unservable nodes`,
      ),
    );
  if (victims.length > stranded.length)
    events.push(
      event(pool, 'Normal', 'ScaledDown', `deleting ${victims.length - stranded.length} Idle pod(s)`),
    );
  return { ...base, writes, events };
}
