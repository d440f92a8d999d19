// Decisions as data: what a reconciler wants written, recorded and when it wants to run again.
// Runtimes (controller, CLI, simulator) carry them out with `applyDecision`.
import { keyOf, type ObjectKey } from './meta.ts';
import type { DeletePreconditions, MergePatch, PatchOptions } from './ports.ts';
import type { AnyObject, Kind } from './types.ts';

/**
 * What a write does to a pool pod, as data: metrics and SLIs count the intents of applied writes,
 * never the shape of a patch (a relabel of a pod the claim already holds is not a bind).
 */
export type WriteIntent =
  /** A claim takes an Idle pod: a bind, or a migration's target. */
  | { act: 'bind'; pool: string }
  /** A claim labels the pod it already references again (its label was removed). */
  | { act: 'relabel'; pool: string }
  /** A held pod is let go: back to Idle (`recycled`) or deleted (releasePolicy Delete, outdated, finished). */
  | { act: 'release'; pool: string; recycled: boolean };

export type Write = WriteOp & {
  /** What the write means, where a metric counts it (pool pod binds, relabels and releases). */
  intent?: WriteIntent;
};

type WriteOp =
  | { op: 'create'; object: AnyObject; why: string }
  | { op: 'update'; object: AnyObject; why: string }
  | { op: 'updateStatus'; object: AnyObject; why: string }
  | { op: 'patch'; kind: Kind; key: ObjectKey; patch: MergePatch; precondition?: PatchOptions; why: string }
  | {
      op: 'patchStatus';
      kind: Kind;
      key: ObjectKey;
      patch: MergePatch;
      precondition?: PatchOptions;
      why: string;
    }
  | { op: 'delete'; kind: Kind; key: ObjectKey; preconditions?: DeletePreconditions; why: string };

/** The object a write is to: its kind and key. */
export function writeTarget(w: Write): { kind: Kind; key: ObjectKey } {
  if (w.op === 'create' || w.op === 'update' || w.op === 'updateStatus')
    return { kind: w.object.kind as Kind, key: keyOf(w.object) };
  return { kind: w.kind, key: w.key };
}

export interface EventSpec {
  regarding: { kind: Kind; namespace: string; name: string; uid?: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** What a metric counts of the Event, as data (never parsed out of `message`); not written to the API. */
  detail?: EventDetail;
}

/** The structured part of an Event that metrics read. */
export type EventDetail =
  /** TakenOver: why the holder counted as dead (its liveness reason, or LeaseExpired). */
  | { takeover: string }
  /** Migrated: the migration finished on a pod, or with none left (`lost`). */
  | { migration: 'success' | 'lost'; pool: string };

export interface Decision {
  writes: Write[];
  events: EventSpec[];
  /** Run this key again after this many milliseconds (level-triggered: a hint, not a promise). */
  requeueAfterMs?: number;
  /** Decided from a cache and must not act on it: re-read live and decide again (nothing applied). */
  needsLiveRead?: boolean;
  /**
   * Decided from a summarized cache view (a pool's quiet Idle pods counted, not listed) and needs the
   * objects themselves (victims to choose): gather in full from the cache and decide again.
   */
  needsFullRead?: boolean;
}

export const noop = (requeueAfterMs?: number): Decision =>
  requeueAfterMs === undefined ? { writes: [], events: [] } : { writes: [], events: [], requeueAfterMs };

export function event(
  obj: { kind: string; metadata: { namespace?: string; name: string; uid?: string } },
  type: EventSpec['type'],
  reason: string,
  message: string,
  detail?: EventDetail,
): EventSpec {
  return {
    regarding: {
      kind: obj.kind as Kind,
      namespace: obj.metadata.namespace ?? '',
      name: obj.metadata.name,
      ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
    },
    type,
    reason,
    message,
    ...(detail ? { detail } : {}),
  };
}

/** Shortest positive requeue of several decisions (undefined when none asks). */
export function minRequeue(...xs: (number | undefined)[]): number | undefined {
  const ys = xs.filter((x): x is number => x !== undefined);
  return ys.length === 0 ? undefined : Math.min(...ys);
}
