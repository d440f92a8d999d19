// Decisions as data: what a reconciler wants written, recorded and when it wants to run again.
// Runtimes (controller, CLI, simulator) carry them out with `applyDecision`.
import { keyOf, type ObjectKey } from './meta.ts';
import type { DeletePreconditions, MergePatch, PatchOptions } from './ports.ts';
import type { AnyObject, Kind } from './types.ts';

export type Write =
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
}

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
  };
}

/** Shortest positive requeue of several decisions (undefined when none asks). */
export function minRequeue(...xs: (number | undefined)[]): number | undefined {
  const ys = xs.filter((x): x is number => x !== undefined);
  return ys.length === 0 ? undefined : Math.min(...ys);
}
