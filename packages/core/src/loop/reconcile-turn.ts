// One turn of the loop for one key, as the controller's workers and the simulator's replicas both
// take it: the own-writes skip (while the cache shows a version this controller replaced), the
// reconcile with its writes to its own object recorded, core's queue policy performed on the queue,
// and the own writes remembered for the next turn. Metrics, logs and checks stay with the caller.
import type { ObjectKey } from '../api/meta.ts';
import type { StepObserver } from '../reconcile/step.ts';
import type { OwnWrites } from './own-writes.ts';
import { recordingWritesTo } from './own-writes.ts';
import {
  applyQueueAction,
  type LoopOutcome,
  type PolicyQueue,
  type QueueAction,
  queuePolicy,
} from './queue-policy.ts';
import { parseReconcileKey, type ReconcileKind } from './reconcile-key.ts';
import { type ReconcileDeps, reconcile } from './reconcilers.ts';

export interface TurnOptions {
  /** The resourceVersion of the key's object in the cache (undefined: not there). */
  cachedVersion(kind: ReconcileKind, key: ObjectKey): string | undefined | Promise<string | undefined>;
  ownWrites: OwnWrites;
  queue: PolicyQueue;
  deps: ReconcileDeps;
  /** Reconcile even if the cache is behind (the simulator forcing an interleaving). */
  force?: boolean;
  /** Errors that end the turn as they are, nothing queued or recorded (the simulator's crash). */
  propagate?: (error: unknown) => boolean;
  /**
   * A fresh id for each turn (the logs' `reconcileID`), from the caller: core reads no random source
   * or clock of its own. Unset: turns have none.
   */
  newReconcileID?: () => string;
  /** Watches the reconcile's stages (reconcile/step.ts), made per turn so it knows the turn. */
  stepObserver?: (turn: TurnIdentity) => StepObserver | undefined;
}

/** Which turn this is: the key's parts and its id. */
export interface TurnIdentity {
  kind: ReconcileKind;
  namespace: string;
  name: string;
  reconcileID?: string;
}

export interface Turn extends TurnIdentity {
  /** Not reconciled: the cache was behind this controller's own write. */
  skipped: boolean;
  action: QueueAction;
  /** The delay the key got (undefined: not queued again). */
  delay: number | undefined;
  /** What the reconcile threw (action.next is then 'retry-rate-limited'). */
  error?: unknown;
}

export async function reconcileTurn(key: string, t: TurnOptions): Promise<Turn> {
  const { kind, namespace, name } = parseReconcileKey(key);
  const reconcileID = t.newReconcileID?.();
  const id: TurnIdentity = { kind, namespace, name, ...(reconcileID !== undefined ? { reconcileID } : {}) };
  const objectKey = { namespace, name };
  const versionBefore = await t.cachedVersion(kind, objectKey);
  if (!t.force && t.ownWrites.cacheIsBehind(key, versionBefore)) {
    const action = queuePolicy({ cacheBehind: { ttlMs: t.ownWrites.ttl } });
    return { ...id, skipped: true, action, delay: applyQueueAction(t.queue, key, action) };
  }
  const written: string[] = [];
  const stepObserver = t.stepObserver?.(id);
  const deps = {
    ...t.deps,
    client: recordingWritesTo(t.deps.client, kind, objectKey, written),
    ...(stepObserver ? { stepObserver } : {}),
  };
  let outcome: LoopOutcome;
  try {
    outcome = { reconciled: await reconcile(kind, deps, objectKey) };
  } catch (e) {
    if (t.propagate?.(e)) throw e;
    outcome = { failed: e };
  }
  const action = queuePolicy(outcome);
  const delay = applyQueueAction(t.queue, key, action);
  t.ownWrites.record(key, versionBefore, written);
  return {
    ...id,
    skipped: false,
    action,
    delay,
    ...('failed' in outcome ? { error: outcome.failed } : {}),
  };
}
