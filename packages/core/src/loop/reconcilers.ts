// The control loop's table: one reconciler per reconciled kind, each the same contract (gather,
// decide, optional apply and follow-up; reconcile/step.ts) run by the one reconcile step. The
// controller's Manager and the simulator's World both dispatch through it (and route events
// through map-event.ts), so neither has its own idea of which code reconciles what.
import type { ObjectKey } from '../api/meta.ts';
import type { Tracer } from '../api/tracing.ts';
import type { BindsInFlight } from '../pool/binds-in-flight.ts';
import type { ClaimIndex } from '../pool/claim-index.ts';
import type { PoolExpectations } from '../pool/expectations.ts';
import type { PoolPodsSource } from '../pool/pool-pod-index.ts';
import type { PoolStatusPacer } from '../pool/status-pacer.ts';
import { type CaptureDeps, captureReconciler } from '../reconcile/capture/index.ts';
import { podClaimReconciler } from '../reconcile/podclaim/index.ts';
import { podClaimSetReconciler } from '../reconcile/podclaimset/index.ts';
import { podPoolReconciler } from '../reconcile/podpool/index.ts';
import { type ReconcileResult, type Reconciler, reconcileStep } from '../reconcile/step.ts';
import type { ReconcileKind } from './reconcile-key.ts';

/**
 * What every reconciler may use: the cache, the client, the clock, Events, the capture backend, the
 * rules, the process's pool expectations and binds in flight (one each per process, kept across
 * reconciles), its pool pod index (fed by the pod informer behind the cache) and its pool status
 * pacer; with a tracer, spans (off when absent).
 */
export type ReconcileDeps = CaptureDeps & {
  expectations?: PoolExpectations;
  bindsInFlight?: BindsInFlight;
  /** The event router's claim index: the order a pool's waiting claims take their turns in. */
  waiting?: Pick<ClaimIndex, 'waitingAhead'>;
  poolPods?: PoolPodsSource;
  statusPacer?: PoolStatusPacer;
  tracer?: Tracer;
};

const RECONCILERS: Readonly<Record<ReconcileKind, Reconciler<ReconcileDeps, unknown>>> = Object.freeze({
  Capture: captureReconciler,
  PodClaim: podClaimReconciler,
  PodClaimSet: podClaimSetReconciler,
  PodPool: podPoolReconciler,
});

/** One reconcile of one key, by the table. */
export function reconcile(
  kind: ReconcileKind,
  deps: ReconcileDeps,
  key: ObjectKey,
): Promise<ReconcileResult> {
  return reconcileStep(RECONCILERS[kind], deps, key, kind);
}
