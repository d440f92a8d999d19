// The one reconcile step every reconciler runs: gather a snapshot, decide, re-gather in full or live
// and decide again when the decision asks to, apply the decision's writes in order (stopping at the
// first failure), run the follow-up I/O it asks for and decide on its outcome, and turn the last
// outcome into a requeue policy. Every write and Event of a reconcile is in a Decision.
// With a tracer in its deps, trace-step.ts wraps each phase and write in a span.

import type { Decision } from '../api/decision.ts';
import type { ApiError } from '../api/errors.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Client } from '../api/ports.ts';
import type { Tracer } from '../api/tracing.ts';
import { type ApplyResult, applyDecision, type EventRecorder } from './apply.ts';
import { SAFETY_RULES, type SafetyRules } from './safety-rules.ts';
import { type ReconcileTrace, traceStep } from './trace-step.ts';

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** A conflict, a vanished object or a lost create race is retried at once; anything else is an error. */
function failedResult(error: ApiError): ReconcileResult {
  if (error.reason === 'Conflict' || error.reason === 'NotFound' || error.reason === 'AlreadyExists') {
    return { requeueAfterMs: 0 };
  }
  throw error;
}

export interface GatherOptions<Snapshot> {
  /**
   * Read what the decision acts on live, not from the cache: the step asks for it when a decision
   * made from the cache says `needsLiveRead`.
   */
  live: boolean;
  /** The snapshot from the cache that the live read confirms (absent on the first gather). */
  cached?: Snapshot;
  /**
   * Read every object the decision may act on, not a summary of them: the step asks for it when a
   * decision made from a summary says `needsFullRead` (a live read is always full).
   */
  full?: boolean;
}

/** How long each stage of one reconcile step took, in the observer's clock (ms). */
export interface StepStages {
  /** Every gather: from the cache, and live when a decision asked for it. */
  gatherMs: number;
  /** Every decide (pure). */
  decideMs: number;
  /** Every apply: the decision's writes and Events. */
  applyMs: number;
  /** Every follow-up I/O (a backend call, a live re-read). */
  followUpMs: number;
}

/** One decision a step applied, and what its apply did. */
export interface AppliedDecision {
  decision: Decision;
  result: ApplyResult;
}

/**
 * Watches one reconcile step's stages (the Manager's debug line per bind). Unset, the step reads no
 * clock. `done` gets every decision the step applied, in order, and the stages summed over the step.
 */
export interface StepObserver {
  /** A monotonic clock in ms. */
  now(): number;
  done(applied: readonly AppliedDecision[], stages: StepStages): void;
}

/** What every reconciler's ports include. */
export interface StepDeps {
  client: Client;
  recorder?: EventRecorder;
  /** The rules decisions apply (default SAFETY_RULES; a test may break one on purpose). */
  rules?: SafetyRules;
  /** Spans for each reconcile, its phases and writes (trace-step.ts); absent: tracing is off. */
  tracer?: Tracer;
  /** Told each step's stage durations (optional: no cost when unset). */
  stepObserver?: StepObserver;
}

/**
 * What a reconciler is: how it reads its world, how it decides (pure), and optionally how it
 * carries a decision out and what I/O follows it.
 */
export interface Reconciler<Deps, Snapshot, D extends Decision = Decision> {
  /** The snapshot to decide from; undefined when the object is gone (nothing to do). */
  gather(deps: Deps, key: ObjectKey, opts: GatherOptions<Snapshot>): Promise<Snapshot | undefined>;
  decide(snapshot: Snapshot, rules: SafetyRules): D;
  /** Carries the decision out (default: `applyDecision`, its writes in order, then its Events). */
  apply?(deps: Deps, d: D, snapshot: Snapshot): Promise<ApplyResult>;
  /**
   * The I/O a decision asks for once it is applied (or failed): a backend call, a live re-read.
   * Answers the snapshot to decide from next (its outcome recorded in it), or undefined: done.
   */
  followUp?(deps: Deps, snapshot: Snapshot, d: D, applied: ApplyResult): Promise<Snapshot | undefined>;
  /** How its reconciles join their object's trace when tracing is on (default: a trace each). */
  trace?: ReconcileTrace<Snapshot, D>;
}

export async function reconcileStep<Deps extends StepDeps, Snapshot, D extends Decision>(
  r: Reconciler<Deps, Snapshot, D>,
  deps: Deps,
  key: ObjectKey,
  /** The reconciled kind, named in the reconcile's span. */
  kind?: string,
): Promise<ReconcileResult> {
  if (!deps.tracer) return runStep(r, deps, key);
  const traced = traceStep(r, deps, key, deps.tracer, kind);
  try {
    const result = await runStep(traced.reconciler, traced.deps, key);
    traced.end();
    return result;
  } catch (e) {
    traced.end(e);
    throw e;
  }
}

async function runStep<Deps extends StepDeps, Snapshot, D extends Decision>(
  r: Reconciler<Deps, Snapshot, D>,
  deps: Deps,
  key: ObjectKey,
): Promise<ReconcileResult> {
  const rules = deps.rules ?? SAFETY_RULES;
  const obs = deps.stepObserver;
  // Stage timing only with an observer: `lap` is a no-op otherwise.
  const stages: StepStages = { gatherMs: 0, decideMs: 0, applyMs: 0, followUpMs: 0 };
  const done: AppliedDecision[] = [];
  let mark = obs?.now() ?? 0;
  const lap = (stage: keyof StepStages) => {
    if (!obs) return;
    const t = obs.now();
    stages[stage] += t - mark;
    mark = t;
  };
  let cached = await r.gather(deps, key, { live: false });
  lap('gatherMs');
  if (cached === undefined) return {};
  let snap: Snapshot = cached;
  let d = r.decide(snap, rules);
  lap('decideMs');
  if (d.needsFullRead) {
    cached = await r.gather(deps, key, { live: false, full: true });
    lap('gatherMs');
    if (cached === undefined) return {};
    snap = cached;
    d = r.decide(snap, rules);
    lap('decideMs');
  }
  if (d.needsLiveRead) {
    const live = await r.gather(deps, key, { live: true, cached });
    lap('gatherMs');
    if (live === undefined) return {};
    snap = live;
    d = r.decide(snap, rules);
    lap('decideMs');
  }
  for (;;) {
    const applied = r.apply
      ? await r.apply(deps, d, snap)
      : await applyDecision(deps.client, d, deps.recorder);
    lap('applyMs');
    if (obs) done.push({ decision: d, result: applied });
    const next: Snapshot | undefined = r.followUp ? await r.followUp(deps, snap, d, applied) : undefined;
    lap('followUpMs');
    if (next === undefined) {
      obs?.done(done, stages);
      return requeueOf(d, applied);
    }
    snap = next;
    d = r.decide(snap, rules);
    lap('decideMs');
  }
}

function requeueOf(d: Decision, applied: ApplyResult): ReconcileResult {
  if (applied.failed) return failedResult(applied.failed.error);
  return d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs };
}
