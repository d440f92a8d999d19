// The reconcile step's spans, when its deps carry a tracer: one `reconcile <Kind>` span per
// reconcile with `gather`, `decide`, `apply` (and `followUp`) under it and one `write <verb> <Kind>`
// span per API write. A reconciler with trace hooks puts its reconciles under its object's trace
// (a claim's, from create to Bound), records that trace on the object in a write its decision makes
// anyway, and ends the trace's root span when the object reaches its goal. The step wraps the
// reconciler and the client; without a tracer none of this runs.
import type { Decision } from '../api/decision.ts';
import { intercept } from '../api/interceptor.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Client } from '../api/ports.ts';
import type { Attributes, Span, SpanContext, TraceRoot, Tracer } from '../api/tracing.ts';
import { type ApplyResult, applyDecision, type EventRecorder } from './apply.ts';

/** How a reconciler's reconciles join its object's trace. */
export interface ReconcileTrace<Snapshot, D extends Decision = Decision> {
  /** The trace a reconcile of this snapshot belongs to (undefined: a trace of its own). */
  root(s: Snapshot): TraceRoot | undefined;
  /** The decision with `traceparent` recorded in a write it makes anyway (unchanged: no such write). */
  carry(d: D, s: Snapshot, traceparent: string): D;
  /** The root span, when the writes this decision applied completed the object's trace. */
  completed(
    s: Snapshot,
    d: D,
    applied: ApplyResult,
  ): { name: string; startTime: number; attributes: Attributes } | undefined;
}

/** The reconciler shape the step runs (step.ts's Reconciler, named structurally: no import cycle). */
interface Parts<Deps, Snapshot, D extends Decision, O, Rules> {
  gather(deps: Deps, key: ObjectKey, opts: O): Promise<Snapshot | undefined>;
  decide(snapshot: Snapshot, rules: Rules): D;
  apply?(deps: Deps, d: D, snapshot: Snapshot): Promise<ApplyResult>;
  followUp?(deps: Deps, snapshot: Snapshot, d: D, applied: ApplyResult): Promise<Snapshot | undefined>;
  trace?: ReconcileTrace<Snapshot, D>;
}

type StepDepsLike = { client: Client; recorder?: EventRecorder };

const WRITE_VERBS = new Set(['create', 'update', 'updateStatus', 'patch', 'patchStatus', 'delete']);

const errorText = (e: unknown) => String((e as Error)?.message ?? e);

export interface TracedStep<R, Deps> {
  reconciler: R;
  deps: Deps;
  /** Ends the reconcile span (with the error the step threw, if any). */
  end(error?: unknown): void;
}

export function traceStep<Deps extends StepDepsLike, Snapshot, D extends Decision, O, Rules>(
  r: Parts<Deps, Snapshot, D, O, Rules>,
  deps: Deps,
  key: ObjectKey,
  tracer: Tracer,
  kind: string | undefined,
): TracedStep<Parts<Deps, Snapshot, D, O, Rules>, Deps> {
  const hooks = r.trace;
  let root: TraceRoot | undefined;
  let reconcileSpan: Span | undefined;
  /** The span API writes are made under: apply's or followUp's while they run. */
  let current: Span | undefined;
  const attributes: Attributes = {
    ...(kind ? { 'claimkit.kind': kind } : {}),
    'k8s.namespace.name': key.namespace ?? '',
    'claimkit.name': key.name,
  };
  const under = (): SpanContext | undefined => (current ?? reconcileSpan)?.context();
  const started = (t0: number, snapshot: Snapshot | undefined) => {
    if (reconcileSpan) return reconcileSpan;
    root = snapshot !== undefined && hooks ? hooks.root(snapshot) : undefined;
    reconcileSpan = tracer.startSpan(`reconcile${kind ? ` ${kind}` : ''}`, {
      parent: root?.context,
      startTime: t0,
      attributes,
    });
    return reconcileSpan;
  };

  const client = intercept(deps.client, {
    request: async (call, next) => {
      if (!WRITE_VERBS.has(call.verb) || !('key' in call)) return next();
      const span = tracer.startSpan(`write ${call.verb} ${call.kind}`, {
        parent: under(),
        kind: 'client',
        attributes: { 'k8s.namespace.name': call.key.namespace ?? '', 'claimkit.name': call.key.name },
      });
      try {
        const result = await next();
        span.end();
        return result;
      } catch (e) {
        span.end({ error: errorText(e) });
        throw e;
      }
    },
  });

  const reconciler: Parts<Deps, Snapshot, D, O, Rules> = {
    async gather(d, k, opts) {
      const t0 = tracer.now();
      const live = Boolean((opts as { live?: boolean } | undefined)?.live);
      let snapshot: Snapshot | undefined;
      try {
        snapshot = await r.gather(d, k, opts);
      } catch (e) {
        const parent = started(t0, undefined).context();
        tracer
          .startSpan('gather', { parent, startTime: t0, attributes: { live } })
          .end({ error: errorText(e) });
        throw e;
      }
      const parent = started(t0, snapshot).context();
      tracer
        .startSpan('gather', { parent, startTime: t0, attributes: { live, found: snapshot !== undefined } })
        .end();
      return snapshot;
    },
    decide(snapshot, rules) {
      const span = tracer.startSpan('decide', { parent: reconcileSpan?.context() });
      let d = r.decide(snapshot, rules);
      if (root?.record && hooks) {
        const carried = hooks.carry(d, snapshot, root.record);
        if (carried !== d) span.setAttribute('claimkit.traceparent.recorded', true);
        d = carried;
      }
      span.setAttribute('claimkit.writes', d.writes.length);
      span.setAttribute('claimkit.events', d.events.length);
      if (d.requeueAfterMs !== undefined) span.setAttribute('claimkit.requeue_after_ms', d.requeueAfterMs);
      if (d.needsLiveRead) span.setAttribute('claimkit.needs_live_read', true);
      if (d.needsFullRead) span.setAttribute('claimkit.needs_full_read', true);
      span.end();
      return d;
    },
    async apply(d, dec, snapshot) {
      const span = tracer.startSpan('apply', {
        parent: reconcileSpan?.context(),
        attributes: { 'claimkit.writes': dec.writes.map((w) => w.why).join('; ') },
      });
      current = span;
      let applied: ApplyResult;
      try {
        applied = r.apply ? await r.apply(d, dec, snapshot) : await applyDecision(d.client, dec, d.recorder);
      } catch (e) {
        span.end({ error: errorText(e) });
        throw e;
      } finally {
        current = undefined;
      }
      span.setAttribute('claimkit.applied', applied.applied);
      span.end(
        applied.failed ? { error: `${applied.failed.write.why}: ${applied.failed.error.message}` } : {},
      );
      const done = root && hooks?.completed(snapshot, dec, applied);
      if (root && done) {
        tracer
          .startSpan(done.name, {
            context: root.context,
            parent: root.parent,
            startTime: done.startTime,
            attributes: done.attributes,
          })
          .end();
      }
      return applied;
    },
  };
  if (r.followUp) {
    const followUp = r.followUp.bind(r);
    reconciler.followUp = async (d, snapshot, dec, applied) => {
      const span = tracer.startSpan('followUp', { parent: reconcileSpan?.context() });
      current = span;
      try {
        const next = await followUp(d, snapshot, dec, applied);
        span.end();
        return next;
      } catch (e) {
        span.end({ error: errorText(e) });
        throw e;
      } finally {
        current = undefined;
      }
    };
  }
  return {
    reconciler,
    deps: { ...deps, client },
    end(error) {
      (reconcileSpan ?? started(tracer.now(), undefined)).end(
        error === undefined ? {} : { error: errorText(error) },
      );
    },
  };
}
