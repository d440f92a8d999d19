// How many Idle pods a pool creates or deletes, from its cache view alone (no live list):
// - pods it created or deleted but its cache does not show yet (expectations) hold every new
//   create and delete, so a lagging cache never creates twice (the ReplicaSet pattern);
// - terminating pods count against maxPods (they still hold a node's resources);
// - Idle pods that are not Ready yet, unschedulable ones included, count toward the Idle target as
//   "in progress": a pod the scheduler cannot place is held, not multiplied;
// - Idle pods stranded on a NotReady or cordoned node do not count: a replacement is created
//   first, and the stranded pod is deleted once the target is met without it (or at once when
//   maxPods leaves no room for the replacement).
// - finished Idle pods (phase Succeeded or Failed: their containers exited for good) do not count
//   and are deleted at once: unlike a stranded pod they can never serve again. Until gone they
//   still count against maxPods, so the replacement comes once there is room.
// - Idle pods the pool says can never serve (`cannotServe`: a pod that could not be restored from
//   its checkpoint image under onRestoreFailure Cold, restore.ts) are replaced like finished ones.
// - template rollout (rollout.ts): Idle pods of an outdated template do not count toward the target
//   either, so current ones are created next to them (within maxPods); an outdated Idle pod goes
//   once enough current Idle pods are Ready to keep the target without it.
// - a pool seeded from a Capture (spec.source) with no fenced result holds its creates: nothing is
//   created, replaced or rolled out; excess Idle pods are still scaled down.
// Deletes carry the pod's UID and resourceVersion, so a concurrent bind wins.

import { type EventSpec, event, type Write } from '../api/decision.ts';
import { parseTimestamp } from '../api/meta.ts';
import { isDeleting, isPodFinished } from '../api/pod-predicates.ts';
import type { Pod, PodPool } from '../api/types.ts';
import type { PendingExpectations } from './expectations.ts';
import { claimedBy, deletePodAsReadWrite, stateOf } from './pods.ts';
import { outdatedIdleToDelete, scaleDownOrder } from './rollout.ts';
import { isStranded, isUnschedulable, type UnservableNodes } from './serving.ts';
import { isUpdatedPod, poolTemplateHash } from './template-hash.ts';

export interface ScalingInput {
  pool: PodPool;
  /** Every pod of the pool the cache shows, terminating ones included. */
  pods: Pod[];
  /** Claims of the pool waiting for a pod (pool/demand.ts): one more Idle pod each. */
  pendingClaims: number;
  /**
   * Pods a live claim references (pool/demand.ts): not Idle whatever their labels say (the cache has
   * not shown the bind's pod write yet), so neither counted toward the target nor scaled down.
   */
  taken?: (p: Pod) => boolean;
  expectations: PendingExpectations;
  unservable: UnservableNodes;
  now: number;
  /** Creates to keep; default: a fresh pod from the pool's template. */
  newPod: (pool: PodPool) => Pod;
  /** The hash new pods carry (default: the template's; a seeded pool's includes its seed). */
  templateHash?: string;
  /**
   * Set while the pool's spec.source has no fenced result (pool/source.ts): nothing is created,
   * replaced or rolled out, and no pod is judged outdated; excess Idle pods are still scaled down.
   */
  holdCreates?: boolean;
  /**
   * Pods of the pool counted, not listed in `pods` (pool-pod-index.ts): quiet Idle pods of the
   * current template on servable nodes that no claim references. Where the decision must choose
   * among Idle pods (scale-down, rollout, over maxPods) and some are only counted, it says
   * `needsFullRead` instead.
   */
  quietIdle?: number;
  /**
   * Why an Idle pod can never serve, though it has not finished (undefined: it may). Such pods are
   * deleted and replaced as finished ones are (restore.ts: a failed restore under Cold).
   */
  cannotServe?: (p: Pod) => string | undefined;
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
  /** Idle pods whose containers finished for good (being deleted and replaced). */
  finished: number;
  /** Only counted Idle pods (ScalingInput.quietIdle) could be chosen here: list them, decide again. */
  needsFullRead?: true;
}

const isIdleByLabel = (p: Pod): boolean =>
  stateOf(p) === 'Idle' && claimedBy(p) === undefined && !isDeleting(p);

/** Newest first (not-yet-warm pods go before warm ones), then by name, so replicas pick the same victims. */
function newestFirst(a: Pod, b: Pod): number {
  return (
    (parseTimestamp(b.metadata.creationTimestamp) ?? 0) -
      (parseTimestamp(a.metadata.creationTimestamp) ?? 0) || (a.metadata.name < b.metadata.name ? 1 : -1)
  );
}

/** What scaling counts of a pool's pods, sorted in one pass (a pool reconcile runs on every bind). */
interface SortedPods {
  /** Not deleting. */
  live: number;
  /** Live, Idle by label and not taken by a claim's reference. */
  idle: number;
  /** Idle pods whose containers exited for good. */
  finished: Pod[];
  /** Idle, not finished, on a node that cannot serve. */
  stranded: Pod[];
  /** Idle pods that can serve where they are (not finished, not stranded). */
  servable: Pod[];
  /**
   * Servable pods that count toward the target: of the current template (template rollout), unless
   * creates are held: then there is no current template to judge by, and every servable pod counts.
   */
  healthy: Pod[];
  /** Idle pods the scheduler found no node for. */
  unschedulable: number;
}

function sortPoolPods(x: ScalingInput, hash: string): SortedPods {
  const out: SortedPods = {
    live: 0,
    idle: 0,
    finished: [],
    stranded: [],
    servable: [],
    healthy: [],
    unschedulable: 0,
  };
  const taken = x.taken;
  for (const p of x.pods) {
    if (isDeleting(p)) continue;
    out.live++;
    if (!isIdleByLabel(p) || taken?.(p)) continue;
    out.idle++;
    if (isUnschedulable(p)) out.unschedulable++;
    if (isPodFinished(p) || x.cannotServe?.(p) !== undefined) out.finished.push(p);
    else if (isStranded(p, x.unservable)) out.stranded.push(p);
    else {
      out.servable.push(p);
      if (x.holdCreates || isUpdatedPod(p, hash)) out.healthy.push(p);
    }
  }
  return out;
}

export function decideScaling(x: ScalingInput): ScalingDecision {
  const { pool } = x;
  const hash = x.templateHash ?? poolTemplateHash(pool);
  const sorted = sortPoolPods(x, hash);
  const { finished, stranded, servable, healthy, unschedulable } = sorted;
  // Counted pods are live, Idle, servable and healthy (ScalingInput.quietIdle).
  const quiet = x.quietIdle ?? 0;
  const live = sorted.live + quiet;
  const idle = sorted.idle + quiet;
  const healthyCount = healthy.length + quiet;
  const podCount = x.pods.length + quiet;
  const terminating = podCount - live;
  const held = live - idle;
  const desiredIdle = Math.min(pool.spec.minIdle + x.pendingClaims, Math.max(0, pool.spec.maxPods - held));
  const base = {
    desiredIdle,
    unschedulable,
    stranded: stranded.length,
    finished: finished.length,
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

  const room = Math.max(0, pool.spec.maxPods - podCount);
  const need = desiredIdle - healthyCount;
  // Victims are chosen among Idle pods, counted ones included: scale-down and a rollout's Ready
  // count (outdated servable pods beside current ones). Over maxPods is one of the two: healthy pods
  // never exceed desiredIdle <= maxPods - held otherwise.
  const outdatedServable = !x.holdCreates && healthy.length !== servable.length;
  if (quiet > 0 && (healthyCount > desiredIdle || outdatedServable))
    return { ...base, writes, events, needsFullRead: true };
  const deleting = new Set<string>();
  let created = 0;
  // Finished pods never run again: deleted at once (a concurrent bind or relabel still wins); left
  // alone while creates are held (no replacement could follow).
  let ended = 0;
  for (const p of x.holdCreates ? [] : [...finished].sort(newestFirst)) {
    deleting.add(p.metadata.name);
    const why = isPodFinished(p) ? undefined : x.cannotServe?.(p);
    if (why === undefined) ended++;
    writes.push(
      deletePodAsReadWrite(
        p,
        `replace Idle pod ${p.metadata.name}: ${why ?? `finished (phase ${p.status?.phase})`}`,
      ),
    );
  }
  if (ended > 0 && !x.holdCreates)
    events.push(
      event(
        pool,
        'Normal',
        'FinishedReplaced',
        `deleting ${ended} Idle pod(s) that cannot serve (finished: their containers exited for good)`,
      ),
    );
  if (need > 0) {
    const n = x.holdCreates ? 0 : Math.min(need, room);
    created = n;
    for (let i = 0; i < n; i++)
      writes.push({ op: 'create', object: x.newPod(pool), why: `keep ${desiredIdle} Idle` });
    if (n > 0) {
      const terms = terminating > 0 ? ` (${terminating} terminating count against maxPods)` : '';
      events.push(
        event(pool, 'Normal', 'ScaledUp', `creating ${n} pod(s) to keep ${desiredIdle} Idle${terms}`),
      );
    }
    // No room for a replacement: a stranded pod makes room (it cannot serve anyway).
    const freed = x.holdCreates ? [] : [...stranded].sort(newestFirst).slice(0, Math.max(0, need - n));
    for (const p of freed) {
      deleting.add(p.metadata.name);
      writes.push(
        deletePodAsReadWrite(p, `replace Idle pod ${p.metadata.name} on node ${p.spec.nodeName} (no room)`),
      );
    }
    if (freed.length > 0)
      events.push(
        event(
          pool,
          'Normal',
          'StrandedReplaced',
          `deleting ${freed.length} Idle pod(s) that cannot serve (on unservable nodes)`,
        ),
      );
  } else {
    // The target is met by pods that can serve: stranded pods go first, then the extra ones
    // (outdated, not-Ready, newest first: scaleDownOrder), and whatever exceeds maxPods.
    const overMax = Math.max(0, live - stranded.length - finished.length - pool.spec.maxPods);
    const extraHealthy = Math.max(0, healthyCount - desiredIdle);
    const victims = [...stranded].sort(newestFirst);
    if (extraHealthy > 0)
      for (const v of scaleDownOrder(healthy, hash).slice(0, extraHealthy)) victims.push(v);
    const overMaxLeft = overMax - (victims.length - stranded.length);
    if (overMaxLeft > 0) {
      const rest = scaleDownOrder(servable, hash).filter((p) => !victims.includes(p));
      victims.push(...rest.slice(0, overMaxLeft));
    }
    for (const v of victims) {
      deleting.add(v.metadata.name);
      const why = isStranded(v, x.unservable)
        ? `replace Idle pod ${v.metadata.name} on node ${v.spec.nodeName}`
        : `scale down Idle pods to ${desiredIdle}`;
      writes.push(deletePodAsReadWrite(v, why));
    }
    if (stranded.length > 0)
      events.push(
        event(
          pool,
          'Normal',
          'StrandedReplaced',
          `deleting ${stranded.length} Idle pod(s) that cannot serve (on unservable nodes)`,
        ),
      );
    if (victims.length > stranded.length)
      events.push(
        event(pool, 'Normal', 'ScaledDown', `deleting ${victims.length - stranded.length} Idle pod(s)`),
      );
  }
  // Rollout: outdated Idle pods go once current Ready ones keep the target without them.
  // Every servable pod current (healthy are the current ones): nothing to roll out.
  const outdated = !outdatedServable
    ? []
    : outdatedIdleToDelete({
        idle: servable,
        templateHash: hash,
        desiredIdle,
        roomToCreate: podCount + created < pool.spec.maxPods,
        alreadyDeleting: deleting,
      });
  for (const v of outdated)
    writes.push(deletePodAsReadWrite(v, `replace Idle pod ${v.metadata.name} of an outdated template`));
  if (outdated.length > 0)
    events.push(
      event(
        pool,
        'Normal',
        'TemplateRollout',
        `replacing ${outdated.length} Idle pod(s) of an outdated template`,
      ),
    );
  return { ...base, writes, events };
}
