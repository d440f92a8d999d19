// What a simulation run is asked to do (SimOptions) and what it reports (SimResult).
import type { MapEvent } from '../loop/map-event.ts';
import type { KeyStep } from '../loop/routed-key.ts';
import type { ApiModelOptions } from '../model/api-model.ts';
import type { SafetyRules } from '../reconcile/safety-rules.ts';
import type { Action } from './actions.ts';
import type { AdmissionMode } from './admission-layer.ts';
import type { KubectlOp } from './kubectl-actor.ts';
import type { RepairRecord, SimViolation } from './repair-point.ts';

export type { SimViolation } from './repair-point.ts';

/** What a run uses where SimOptions leaves these out (claimctl simulate's defaults too). */
export const SIM_DEFAULTS = { replicas: 2, faultRate: 0.04 } as const;

export interface SimOptions {
  seed: number;
  steps: number;
  /** Controller replicas, all active at once (default SIM_DEFAULTS.replicas). */
  replicas?: number;
  /**
   * Shard the replicas by pool (loop/shard.ts, the controller's --shard): replica i reconciles only
   * the keys of shard i mod `shards`, as its Manager filters them (default 1: every replica every key).
   */
  shards?: number;
  /** Probability that a step injects an API fault (default SIM_DEFAULTS.faultRate). */
  faultRate?: number;
  /** Probability that an `agent` action takes the capture agent down, so starts fail (default 0.15). */
  agentDownRate?: number;
  /** Legacy-writer actions that force the seed's corrupt states (default true). */
  adversary?: boolean;
  /** Steps between quiet periods with convergence checks (default 300). */
  quiesceEvery?: number;
  /**
   * The rules the controllers and holders apply (default core's SAFETY_RULES). Tests pass one broken
   * on purpose (testing/broken-rules.ts) to prove the simulator catches it.
   */
  rules?: SafetyRules;
  /** Test-only: route events through this instead of core's mapEvent (a routing bug on purpose). */
  mapEvent?: MapEvent;
  /** Test-only: the event router's status-only step instead of core's (sim/broken-loop.ts). */
  statusOnlyChange?: KeyStep;
  /** Test-only: the event router's coalescing step instead of core's (sim/broken-loop.ts). */
  coalesce?: KeyStep;
  /** Test-only: how long the replicas' own-writes skip may hold a key (default core's 5 s). */
  ownWritesTtlMs?: number;
  /** Replays spent shrinking a failing trace (default 300; 0 keeps the whole failing prefix). */
  shrinkBudget?: number;
  /**
   * The fewest Idle pods that count as a pool's headroom (default core's HEADROOM_MIN_IDLE, 16, which
   * the simulator's pools of at most maxPods never reach): lower, pools take the 2 s headroom window.
   */
  headroomMinIdle?: number;
  /** The pool's size (default minIdle 2, maxPods 8); a tight maxPods makes over-creation show as P8. */
  pool?: { minIdle: number; maxPods: number };
  /**
   * A second pool, `warm` (cluster.ts), whose pods start from the result of one of the run's
   * captures (PodPool spec.source), which the capture actors work on (holders complete `cap-ext`,
   * the agent `cap-http`, resets recreate both), with one solo claim on it. Every step checks S1:
   * no pod carries a source that was never a fenced result. Default: no such pool (seeds keep
   * their runs).
   */
  poolSource?: { capture: 'cap-http' | 'cap-ext' };
  /** Extra model options (e.g. CRD schema defaulting and validation). */
  modelOptions?: Omit<ApiModelOptions, 'clock' | 'seed'>;
  /**
   * A person with kubectl making random direct writes (kubectl-actor.ts), and what the API server
   * enforces (admission-layer.ts; the model's options then come from there, not `modelOptions`).
   * On: every safety invariant holds after every step. Off: from the actor's first write that the
   * "on" layers would have refused until the next quiet period, which is a repair point
   * (repair-point.ts: controllers, then doctor, then doctor --fix), safety is suspended, except P7's
   * transitions: what the controllers decide about the damage must still never take a pod away.
   */
  /**
   * Probability per step that a pool pod's containers exit for good (phase Succeeded or Failed, as
   * with restartPolicy Never). Default 0: no draw at all, so existing seeds keep their streams.
   */
  podFinishRate?: number;
  /**
   * Probability per step that an operator pins a pool to a shard (annotation claimkit.dev/shard, 0-3,
   * or removes it), moving it and its claims between shards. Default 0: no draw at all.
   */
  poolPinRate?: number;
  kubectl?: {
    admission: AdmissionMode;
    /** Probability of a kubectl write per step (default 0.03). */
    rate?: number;
    /** The kinds of writes the actor makes (default: all). */
    ops?: readonly KubectlOp[];
  };
}

export interface SimResult {
  seed: number;
  steps: number;
  violations: SimViolation[];
  /** The actions that ran, up to and including the first violating one. */
  trace: Action[];
  stats: Record<string, number>;
  /** The repair points of an admission-off run, in order. */
  repairs: RepairRecord[];
}
