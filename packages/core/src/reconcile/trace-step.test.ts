// Traces, when the deps carry a tracer: the step leaves a span per reconcile with its gather, decide,
// apply and each API write under it; a claim's reconciles share one trace (from its UID, or a tool's
// traceparent given at create), recorded in claimkit.dev/traceparent by a spec write the decision
// makes anyway, and the trace's root span (creation -> Bound) is emitted once. Without a tracer
// nothing changes: no annotation is written.
import { describe, expect, test } from 'vitest';
import { ANNOTATION_TRACEPARENT } from '../api/constants.ts';
import { formatTraceparent, parseTraceparent, type SpanOptions, type Tracer } from '../api/tracing.ts';
import { idle, inPool, onNode, pod, podClaim, podPool, ready } from '../testing/fixtures.ts';
import { putAll } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

interface Recorded {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string | undefined;
  attributes: Record<string, unknown>;
  start: number;
  end?: number;
  error?: string;
  kind?: string | undefined;
}

/** A tracer that keeps every span it was asked for. */
function recordingTracer(now: () => number) {
  const spans: Recorded[] = [];
  let n = 0;
  const id = (len: number) => (++n).toString(16).padStart(len, '0');
  const tracer: Tracer = {
    now,
    startSpan(name: string, o: SpanOptions = {}) {
      const ctx = o.context ?? { traceId: o.parent?.traceId ?? id(32), spanId: id(16) };
      const rec: Recorded = {
        name,
        ...ctx,
        parentSpanId: o.parent?.spanId,
        attributes: { ...o.attributes },
        start: o.startTime ?? now(),
        kind: o.kind,
      };
      spans.push(rec);
      return {
        context: () => ctx,
        setAttribute: (k, v) => {
          rec.attributes[k] = v;
        },
        end: (out) => {
          expect(rec.end).toBeUndefined(); // a span ends once
          rec.end = now();
          if (out?.error) rec.error = out.error;
        },
      };
    },
  };
  return { tracer, spans };
}

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

async function claimWorld(opts: { idlePod: boolean; traced: boolean; traceparent?: string }) {
  const w = world();
  const rec = recordingTracer(w.now);
  await putAll(
    w.model,
    podPool('web', (p) => {
      p.spec.minIdle = 0;
      p.spec.maxPods = 2;
    }),
    ...(opts.idlePod ? [pod('pod-x', inPool('web'), idle(), onNode('n1'), ready())] : []),
    podClaim('app', (c) => {
      c.spec.poolName = 'web';
      if (opts.traceparent) c.metadata.annotations = { [ANNOTATION_TRACEPARENT]: opts.traceparent };
    }),
  );
  const deps = opts.traced ? { ...w.deps, tracer: rec.tracer } : w.deps;
  const reconcileClaim = async (n = 4) => {
    for (let i = 0; i < n; i++) {
      await reconcilePodClaim(deps, key('app'));
      w.clock.advance(1000);
    }
  };
  return { ...w, deps, spans: rec.spans, reconcileClaim };
}

describe('traces of the reconcile step', () => {
  test('a claim bound at once: one trace from create to Bound, its context in the annotation written with the finalizer', async () => {
    const w = await claimWorld({ idlePod: true, traced: true });
    const created = Date.parse(w.get('PodClaim', 'app').metadata.creationTimestamp!);
    w.clock.advance(2500);
    await w.reconcileClaim();
    const claim = w.get('PodClaim', 'app');
    expect(claim.status?.phase).toBe('Bound');
    const root = parseTraceparent(claim.metadata.annotations?.[ANNOTATION_TRACEPARENT]);
    expect(root).toBeDefined();

    // Every span of the claim's reconciles is in the annotation's trace.
    expect(w.spans.length).toBeGreaterThan(0);
    for (const s of w.spans) expect(s.traceId).toBe(root!.traceId);
    // The root span: created -> Bound, emitted once, with the annotation's span id.
    const roots = w.spans.filter((s) => s.name === 'claim.bound');
    expect(roots).toHaveLength(1);
    expect(roots[0]!.spanId).toBe(root!.spanId);
    expect(roots[0]!.parentSpanId).toBeUndefined();
    expect(roots[0]!.start).toBe(created);
    expect(roots[0]!.attributes).toMatchObject({ 'claimkit.pool': 'web', 'claimkit.pod': 'pod-x' });

    // Each reconcile hangs under the root; gather, decide and apply under the reconcile; writes under apply.
    const reconciles = w.spans.filter((s) => s.name === 'reconcile');
    expect(reconciles).toHaveLength(4);
    for (const r of reconciles) {
      expect(r.parentSpanId).toBe(root!.spanId);
      expect(r.end).toBeDefined();
      const children = w.spans.filter((s) => s.parentSpanId === r.spanId).map((s) => s.name);
      expect(children).toEqual(expect.arrayContaining(['gather', 'decide', 'apply']));
    }
    const writesOf = (r: (typeof reconciles)[number]) => {
      const apply = w.spans.find((s) => s.name === 'apply' && s.parentSpanId === r.spanId)!;
      return { apply, writes: w.spans.filter((s) => s.parentSpanId === apply.spanId) };
    };
    // Created without the finalizer (as kubectl creates it): the finalizer's write carries the annotation.
    const first = writesOf(reconciles[0]!);
    expect(first.writes.map((s) => s.name)).toEqual(['write update PodClaim']);
    const decide = w.spans.find((s) => s.name === 'decide' && s.parentSpanId === reconciles[0]!.spanId)!;
    expect(decide.attributes).toMatchObject({ 'claimkit.writes': 1, 'claimkit.traceparent.recorded': true });
    // The bind: the pod's CAS, then the claim's status with the binding.
    const bind = writesOf(reconciles[1]!);
    expect(bind.writes.map((s) => s.name)).toEqual(['write patch Pod', 'write patchStatus PodClaim']);
    for (const s of [...first.writes, ...bind.writes]) {
      expect(s.kind).toBe('client');
      expect(s.error).toBeUndefined();
    }
    expect(bind.apply.attributes['claimkit.applied']).toBe(2);
  });

  test('a claim that waits: the finalizer write records the trace at once; the bind adds no write of its own for it', async () => {
    const w = await claimWorld({ idlePod: false, traced: true });
    await w.reconcileClaim(2);
    const waiting = w.get('PodClaim', 'app');
    expect(waiting.status?.phase).toBe('Pending');
    expect(waiting.metadata.annotations?.[ANNOTATION_TRACEPARENT]).toBeDefined();
    const before = new Set(w.spans.map((s) => s.traceId));
    expect(before.size).toBe(1);

    await putAll(w.model, pod('pod-y', inPool('web'), idle(), onNode('n1'), ready()));
    await w.reconcileClaim(3);
    const claim = w.get('PodClaim', 'app');
    expect(claim.status?.phase).toBe('Bound');
    const root = parseTraceparent(claim.metadata.annotations?.[ANNOTATION_TRACEPARENT])!;
    expect([...new Set(w.spans.map((s) => s.traceId))]).toEqual([root.traceId]);
    expect(w.spans.filter((s) => s.name === 'claim.bound')).toHaveLength(1);
    // No write beyond the ones the claim makes anyway: the annotation rode on the finalizer's write.
    const writeNames = w.spans.filter((s) => s.name.startsWith('write ')).map((s) => s.name);
    expect(writeNames.filter((n) => n === 'write update PodClaim')).toHaveLength(1);
  });

  test('a traceparent a tool set at create: the claim joins that trace, the annotation is kept as given', async () => {
    const given = formatTraceparent({ traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8) });
    const w = await claimWorld({ idlePod: true, traced: true, traceparent: given });
    await w.reconcileClaim();
    const claim = w.get('PodClaim', 'app');
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.metadata.annotations?.[ANNOTATION_TRACEPARENT]).toBe(given);
    for (const s of w.spans) expect(s.traceId).toBe('ab'.repeat(16));
    const root = w.spans.find((s) => s.name === 'claim.bound')!;
    expect(root.parentSpanId).toBe('cd'.repeat(8));
    for (const r of w.spans.filter((s) => s.name === 'reconcile')) expect(r.parentSpanId).toBe(root.spanId);
  });

  test('a malformed traceparent is ignored and replaced by the claim’s own', async () => {
    const w = await claimWorld({ idlePod: true, traced: true, traceparent: 'not-a-trace' });
    await w.reconcileClaim();
    const root = parseTraceparent(w.get('PodClaim', 'app').metadata.annotations?.[ANNOTATION_TRACEPARENT]);
    expect(root).toBeDefined();
    for (const s of w.spans) expect(s.traceId).toBe(root!.traceId);
  });

  test('off (no tracer): the same writes, and no annotation', async () => {
    const off = await claimWorld({ idlePod: true, traced: false });
    await off.reconcileClaim();
    const claim = off.get('PodClaim', 'app');
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.metadata.annotations?.[ANNOTATION_TRACEPARENT]).toBeUndefined();
    expect(off.spans).toEqual([]);
    const on = await claimWorld({ idlePod: true, traced: true });
    await on.reconcileClaim();
    const { [ANNOTATION_TRACEPARENT]: _, ...rest } = on.get('PodClaim', 'app').metadata.annotations ?? {};
    expect(rest).toEqual(claim.metadata.annotations ?? {});
    expect(on.get('PodClaim', 'app').spec).toEqual(claim.spec);
  });

  test('a failed write: its span and the apply span carry the error; other kinds get a trace per reconcile', async () => {
    const w = await claimWorld({ idlePod: true, traced: true });
    await reconcilePodClaim(w.deps, key('app')); // the release finalizer
    // Someone else takes the pod between the gather and the bind's CAS: the CAS conflicts.
    const client = {
      ...w.deps.client,
      patch: (() =>
        Promise.reject(
          Object.assign(new Error('conflict'), { reason: 'Conflict' }),
        )) as typeof w.deps.client.patch,
    };
    await reconcilePodClaim({ ...w.deps, client }, key('app')).catch(() => undefined);
    const write = w.spans.find((s) => s.name === 'write patch Pod')!;
    expect(write.error).toContain('conflict');
    const apply = w.spans.find((s) => s.spanId === write.parentSpanId)!;
    expect(apply.name).toBe('apply');
    expect(apply.error).toBeDefined();
    expect(w.spans.some((s) => s.name === 'claim.bound')).toBe(false);

    const before = w.spans.length;
    await reconcilePodPool(w.deps, key('web'));
    const pool = w.spans.slice(before).find((s) => s.name === 'reconcile')!;
    expect(pool.parentSpanId).toBeUndefined();
    expect(pool.attributes).toMatchObject({ 'k8s.namespace.name': NS, 'claimkit.name': 'web' });
  });
});
