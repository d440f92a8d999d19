// Pool coalescing: PodPool keys derived from other objects' changes (pods, claims, captures, nodes,
// the pool's own status) wait `coalesceMs`, so a burst of changes (a wave of binds) becomes one pool
// reconcile and one status write, not one each. The queue keeps the earliest due time of a key, so
// the burst's first change decides when the pool runs. Other keys are queued at once.
//
// A pool with Idle headroom waits longer on its pods' and claims' changes (`headroomCoalesceMs`):
// a claim binds an Idle pod in its own reconcile, so the pool's pass after a bind only refills and
// recounts, and with many Idle pods beyond the claims waiting, refilling a little later delays no
// claim. Without it, every busy pool ran twice a second whatever its bind rate, so the controller's
// cost per bind grew with the number of pools (issue 22: 13 pools took 11x the passes of one). The
// pool's own status-only change waits as long: at 500 ms, the echo of each status write was a pass of
// its own (half the passes left at 13 pools). Node and Capture changes keep the short window.
import type { PodPool } from '../api/types.ts';
import type { KeyStep } from './routed-key.ts';

/** The controller's default coalescing window (ManagerOptions.poolCoalesceMs). */
export const DEFAULT_POOL_COALESCE_MS = 500;

/** The window for pools with Idle headroom (ManagerOptions.poolHeadroomCoalesceMs). */
export const DEFAULT_POOL_HEADROOM_COALESCE_MS = 2000;

/** The fewest Idle pods that count as headroom, whatever the pool's minIdle. */
const HEADROOM_MIN_IDLE = 16;

/**
 * Whether a pool can wait longer before refilling: the Idle pods the cache shows, less one for each
 * claim waiting on the pool (each takes one in its own reconcile), are at least max(16, minIdle / 2).
 * `minIdleFloor` replaces the 16 (the simulator's pools are smaller).
 */
export function hasIdleHeadroom(
  pool: PodPool,
  idle: number,
  waitingClaims: number,
  minIdleFloor = HEADROOM_MIN_IDLE,
): boolean {
  return idle - waitingClaims >= Math.max(minIdleFloor, Math.ceil(pool.spec.minIdle / 2));
}

export const coalesceDerivedPoolKeys: KeyStep = (event, key, settings) => {
  if (key.own || !key.key.startsWith('PodPool|')) return key;
  // Its pods, its claims, and its own status-only change (mostly the echo of its last status write:
  // waiting on it less than on the binds would add a pass per status write).
  const mayWait = event.kind === 'Pod' || event.kind === 'PodClaim' || event.kind === 'PodPool';
  const wait =
    mayWait && settings.headroomCoalesceMs !== undefined && settings.poolHasHeadroom?.(key.key)
      ? Math.max(settings.coalesceMs, settings.headroomCoalesceMs)
      : settings.coalesceMs;
  return { ...key, delayMs: Math.max(key.delayMs, wait) };
};
