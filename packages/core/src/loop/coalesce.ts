// Pool coalescing: PodPool keys derived from other objects' changes (pods, claims, captures, nodes,
// the pool's own status) wait `coalesceMs`, so a burst of changes (a wave of binds) becomes one pool
// reconcile and one status write, not one each. The queue keeps the earliest due time of a key, so
// the burst's first change decides when the pool runs. Other keys are queued at once.
import type { KeyStep } from './routed-key.ts';

/** The controller's default coalescing window (ManagerOptions.poolCoalesceMs). */
export const DEFAULT_POOL_COALESCE_MS = 500;

export const coalesceDerivedPoolKeys: KeyStep = (_event, key, settings) =>
  !key.own && key.key.startsWith('PodPool|')
    ? { ...key, delayMs: Math.max(key.delayMs, settings.coalesceMs) }
    : key;
