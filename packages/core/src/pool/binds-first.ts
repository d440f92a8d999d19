// Binds first: while a backlog of claims waits on a pool and its warm pods can serve every one of
// them, the pool's refill waits a moment. A create costs the API server the create, the scheduler's
// binding and the kubelet's status writes, taken from the binds the waiting claims queue for, and a
// new pod serves none of them (issue 22: a 300-claim burst spent more API server writes on the
// refill than on its binds). Bounded by the waiting claims' age, not by memory: once the oldest has
// waited BINDS_FIRST_MAX_HOLD_MS (by its creationTimestamp) the pool creates whatever happens, so
// a sustained overload delays its refill by that much at most. A trickle of claims (fewer than
// BINDS_FIRST_MIN_WAITING waiting) never holds.

/** Claims waiting on a pool at least, for its creates to wait for their binds. */
export const BINDS_FIRST_MIN_WAITING = 8;
/** A pool's creates wait at most until its oldest waiting claim is this old. */
export const BINDS_FIRST_MAX_HOLD_MS = 2000;

export interface BindsFirstInput {
  /** Claims waiting on the pool (pool/demand.ts). */
  waiting: number;
  /** Idle pods of the pool that count toward its target: what the waiting claims can take. */
  idle: number;
  /** The oldest waiting claim's creationTimestamp (ms since epoch; undefined when unknown). */
  oldestWaitingAt: number | undefined;
  now: number;
}

/**
 * How long the pool's creates wait for the waiting claims' binds, in ms from now: 0 to create now.
 * A claim stamped ahead of this clock (skew) counts as just created, never as holding longer.
 */
export function bindsFirstWaitMs(x: BindsFirstInput): number {
  if (x.waiting < BINDS_FIRST_MIN_WAITING || x.idle < x.waiting || x.oldestWaitingAt === undefined) return 0;
  const age = Math.max(0, x.now - x.oldestWaitingAt);
  return age >= BINDS_FIRST_MAX_HOLD_MS ? 0 : BINDS_FIRST_MAX_HOLD_MS - age;
}
