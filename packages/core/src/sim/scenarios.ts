// Scenarios: a world driven by hand, for named regressions (force an interleaving, settle, run a
// repair point, check what must hold when quiet).
import type { ReconcileKind } from '../loop/reconcile-key.ts';
import { reconcileKey } from '../loop/reconcile-key.ts';
import type { Action } from './actions.ts';
import { apply } from './apply.ts';
import { checkStep } from './check-step.ts';
import { NS } from './cluster.ts';
import { quiesce } from './quiesce.ts';
import { quietStateViolations, type SimViolation } from './repair-point.ts';
import type { World } from './world.ts';

/** Applies one action as a run does, and returns the violations the run would report for it. */
export async function step(w: World, a: Action): Promise<SimViolation[]> {
  await apply(w, a);
  return checkStep(w, a);
}

/** Replica `ctl` reconciles one object now, out of queue order (to force an interleaving). */
export function reconcileNow(w: World, ctl: number, kind: ReconcileKind, name: string): Promise<boolean> {
  return as(w, 'reconcile', () => w.reconcileNext(ctl, undefined, reconcileKey(kind, NS, name)));
}

/** Runs the controllers (and kubelets) until quiet. */
export function settle(w: World): Promise<void> {
  return as(w, 'quiesce', () => quiesce(w));
}

/** Runs `fn` as if in an action of kind `t` (checks attribute writes to who makes them). */
async function as<T>(w: World, t: Action['t'], fn: () => Promise<T>): Promise<T> {
  w.current = t;
  try {
    return await fn();
  } finally {
    w.current = undefined;
  }
}

/**
 * Every state invariant that must hold when quiet (P7 and result fencing included), after what the
 * world recorded since the last call (a controller releasing a pod a live claim references).
 */
export function quietViolations(w: World): SimViolation[] {
  const recorded = w.violations.splice(0);
  return [...recorded, ...quietStateViolations(w.state(), w.clock.now())];
}
