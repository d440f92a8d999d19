// What the Manager tells the world about its work — metrics, SLIs and log lines — fed by what it
// decided and applied: each turn's outcome, each step's applied decisions (their writes' intents:
// core's WriteIntent) and each Event recorded (its structured detail: core's EventDetail). Nothing
// here reads a patch's shape or an Event's text.
import type {
  AppliedDecision,
  EventRecorder,
  EventSpec,
  LogFields,
  StepObserver,
  StepStages,
  Turn,
  TurnIdentity,
  WorkQueueOptions,
  Write,
} from '@claimkit/core';
import { writeTarget } from '@claimkit/core';
import { errorText } from '@claimkit/kube';
import type { Logger } from './log.ts';
import { type ControllerMetrics, WORKQUEUE_NAME } from './metrics.ts';
import type { Slis } from './slis.ts';

export class ManagerObserver {
  private readonly metrics: ControllerMetrics;
  private readonly slis: Slis;
  private readonly log: Logger;
  /** Reconciles completed (any result), for tests and benches. */
  reconciles = 0;
  private readonly pendingEvents = new Set<Promise<unknown>>();

  constructor(metrics: ControllerMetrics, slis: Slis, log: Logger) {
    this.metrics = metrics;
    this.slis = slis;
    this.log = log;
  }

  /** The work queue's depth and each key's wait and work, as controller-runtime's workqueue metrics. */
  queueHooks(): Pick<WorkQueueOptions, 'onDepth' | 'observer'> {
    const name = { name: WORKQUEUE_NAME };
    return {
      onDepth: (d) => {
        this.metrics.queueDepth.set(d);
        this.metrics.wqDepth.set(d, name);
      },
      observer: {
        added: () => this.metrics.wqAdds.inc(name),
        taken: (ms) => this.metrics.wqQueueSeconds.observe(ms / 1000, name),
        finished: (ms) => this.metrics.wqWorkSeconds.observe(ms / 1000, name),
      },
    };
  }

  /** A worker took `kind`'s key: its controller has one more active worker until `end` is called. */
  turnStarted(kind: string): () => void {
    const active = { controller: kind.toLowerCase() };
    this.metrics.crActiveWorkers.add(1, active);
    return () => this.metrics.crActiveWorkers.add(-1, active);
  }

  /** A turn ended (core's reconcileTurn): its result counted, a retry logged, its duration observed. */
  turnFinished(turn: Turn, secs: number): void {
    const { kind, action } = turn;
    const result = action.result;
    this.metrics.reconciles.inc({ kind, result });
    if (turn.skipped) return;
    if (action.next === 'retry-rate-limited') {
      this.metrics.queueRetries.inc({ kind });
      this.metrics.wqRetries.inc({ name: WORKQUEUE_NAME });
      this.log.warn('reconcile failed; retrying', {
        ...turnFields(turn),
        error: errorText(turn.error),
        retryInMs: turn.delay,
      });
    }
    this.reconciles++;
    this.metrics.reconcileSeconds.observe(secs, { kind, result });
    this.metrics.controllerRuntimeTurn(kind, action, secs);
    this.log.debug('reconciled', { ...turnFields(turn), result, ms: Math.round(secs * 1000) });
  }

  /** The observer of one turn's reconcile step: its writes' intents counted, a debug line per bind. */
  step(t: TurnIdentity): StepObserver {
    const fields = turnFields(t);
    return {
      now: () => performance.now(),
      done: (applied, stages) => {
        this.slis.applied(applied);
        this.countConflicts(fields, t.kind, applied);
        this.logBinds(fields, applied, stages);
      },
    };
  }

  /** Each write refused with 409: counted by its write's kind, op and intent, and logged with its why. */
  private countConflicts(fields: LogFields, kind: string, applied: readonly AppliedDecision[]): void {
    for (const { result } of applied) {
      const failed = result.failed;
      if (failed?.error.reason !== 'Conflict') continue;
      const write = conflictLabel(failed.write);
      this.metrics.writeConflicts.inc({ reconciler: kind, write });
      this.log.debug('conflict', { ...fields, write, why: failed.write.why });
    }
  }

  /** One debug line per bind that landed, with the step's stage durations. */
  private logBinds(fields: LogFields, applied: readonly AppliedDecision[], stages: StepStages): void {
    for (const { decision, result } of applied) {
      const i = decision.writes.findIndex((w) => w.intent?.act === 'bind');
      if (i < 0 || result.failed) continue;
      const bind = decision.writes[i]!;
      this.log.debug('bind', {
        ...fields,
        ...(bind.op === 'patch' ? { pod: bind.key.name } : {}),
        writes: result.applied,
        gatherMs: ms(stages.gatherMs),
        decideMs: ms(stages.decideMs),
        applyMs: ms(stages.applyMs),
        followUpMs: ms(stages.followUpMs),
      });
    }
  }

  /**
   * The reconcilers' recorder: every Event counted, observed by the SLIs and logged, then written
   * by `inner` off the worker's path (a reconcile does not wait for its Event; the recorder never
   * throws; QueuedEventRecorder's few writers write them, so a burst's binds go first).
   */
  recorder(inner: EventRecorder | undefined): EventRecorder {
    return {
      record: (e: EventSpec) => {
        this.metrics.events.inc({ type: e.type, reason: e.reason });
        this.slis.recorded(e);
        this.log.info('event', {
          kind: e.regarding.kind,
          namespace: e.regarding.namespace,
          name: e.regarding.name,
          type: e.type,
          reason: e.reason,
          message: e.message,
        });
        if (!inner) return;
        const pending = Promise.resolve(inner.record(e)).catch(() => undefined);
        this.pendingEvents.add(pending);
        void pending.finally(() => this.pendingEvents.delete(pending));
      },
    };
  }

  /** Waits for Event writes still in flight (graceful shutdown and tests). */
  async flushEvents(): Promise<void> {
    await Promise.all([...this.pendingEvents]);
  }
}

/** The fields of a reconcile's log lines, as controller-runtime names them (`controller` is the kind, lower-case). */
function turnFields(t: TurnIdentity): LogFields {
  return {
    controller: t.kind.toLowerCase(),
    namespace: t.namespace,
    name: t.name,
    ...(t.reconcileID ? { reconcileID: t.reconcileID } : {}),
  };
}

const ms = (x: number) => Math.round(x * 1000) / 1000;

/** A write's label: its object's kind, its op and its intent (a bounded set, unlike its why). */
export function conflictLabel(w: Write): string {
  const { kind } = writeTarget(w);
  return `${kind} ${w.op}${w.intent ? ` ${w.intent.act}` : ''}`;
}
