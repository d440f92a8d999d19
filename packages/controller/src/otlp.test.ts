// Traces against an in-process OTLP receiver (a node:http server collecting the POSTed JSON): the
// Manager on core's in-memory API model, claims from create to Bound, one trace each, its context
// in the claim's claimkit.dev/traceparent. Off by default: no endpoint, nothing sent, no annotation.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ANNOTATION_TRACEPARENT, type PodClaim, type PodPool, parseTraceparent } from '@claimkit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { controllerDefaults, parseFlags } from './flags.ts';
import { Manager } from './manager.ts';
import { OtlpTracer } from './otlp.ts';
import { kubelet, model, running, stopRunning, testConfig, until } from './testing/loop-harness.ts';

const NS = 'ns1';
afterEach(stopRunning);

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status: { code: number; message?: string };
}

/** The OTLP/JSON ExportTraceServiceRequest, as much of it as the tests read. */
interface ExportRequest {
  resourceSpans: {
    resource: { attributes: { key: string; value: Record<string, unknown> }[] };
    scopeSpans: { spans: ReceivedSpan[] }[];
  }[];
}

/** An OTLP/HTTP receiver on 127.0.0.1:0 keeping every request's path, content type and body. */
async function receiver(status = 200) {
  const requests: { path: string; contentType: string; body: ExportRequest }[] = [];
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => {
      data += c;
    });
    req.on('end', () => {
      requests.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        body: JSON.parse(data),
      });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  running.push({ stop: () => new Promise<void>((r) => server.close(() => r())) });
  const spans = (): ReceivedSpan[] =>
    requests.flatMap((q) => q.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, spans };
}

const pool: PodPool = {
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodPool',
  metadata: { name: 'web', namespace: NS },
  spec: {
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'web:1' }] },
    },
    minIdle: 2,
    maxPods: 10,
    releasePolicy: 'Recycle',
    drainSeconds: 0,
  },
};
const claim = (name: string): PodClaim => ({
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodClaim',
  metadata: { name, namespace: NS },
  spec: { poolName: 'web' },
});

/** Runs the Manager (with `tracer` or without) until claims a and b are Bound; stops it (flushing). */
async function bindTwoClaims(tracer?: OtlpTracer) {
  const m = model();
  kubelet(m);
  const mgr = new Manager({
    config: testConfig({ concurrency: 4, sweepInterval: 200, resyncInterval: 1000 }),
    client: m,
    source: m,
    ...(tracer ? { tracer } : {}),
  });
  running.push(mgr);
  await mgr.start();
  await m.create(pool);
  // One claim before the pool has Idle pods (it waits, Pending), one after.
  await m.create(claim('a'));
  await until('Idle pods', () => m.listNow('Pod').filter((p) => p.status?.phase === 'Running').length >= 2);
  await m.create(claim('b'));
  const bound = (n: string) => m.getNow('PodClaim', { namespace: NS, name: n }).status?.phase === 'Bound';
  await until('claims Bound', () => bound('a') && bound('b'));
  await mgr.stop();
  return ['a', 'b'].map((n) => m.getNow('PodClaim', { namespace: NS, name: n }));
}

describe('traces (OTLP/HTTP JSON)', () => {
  it('one trace per claim from create to Bound: gather, decide and each write; its id in the annotation', async () => {
    const rx = await receiver();
    const tracer = new OtlpTracer({ endpoint: `${rx.endpoint}/`, serviceName: 'ctl-test', intervalMs: 50 });
    const claims = await bindTwoClaims(tracer);

    expect(rx.requests.length).toBeGreaterThan(0);
    for (const q of rx.requests) {
      expect(q.path).toBe('/v1/traces');
      expect(q.contentType).toBe('application/json');
      expect(q.body.resourceSpans[0]!.resource.attributes).toContainEqual({
        key: 'service.name',
        value: { stringValue: 'ctl-test' },
      });
    }
    const spans = rx.spans();
    const traceIds = new Set<string>();
    for (const c of claims) {
      const root = parseTraceparent(c.metadata.annotations?.[ANNOTATION_TRACEPARENT]);
      expect(root, c.metadata.name).toBeDefined();
      traceIds.add(root!.traceId);
      const trace = spans.filter((s) => s.traceId === root!.traceId);
      // The root: from the claim's creation to its Bound, once, with the annotation's span id.
      const roots = trace.filter((s) => s.name === 'claim.bound');
      expect(roots).toHaveLength(1);
      expect(roots[0]!.spanId).toBe(root!.spanId);
      expect(roots[0]!.parentSpanId ?? '').toBe('');
      const created = BigInt(Date.parse(c.metadata.creationTimestamp!)) * 1_000_000n;
      expect(BigInt(roots[0]!.startTimeUnixNano)).toBe(created);
      expect(BigInt(roots[0]!.endTimeUnixNano)).toBeGreaterThanOrEqual(created);
      // Everything else hangs under it: reconciles, their phases, their writes.
      const ids = new Set(trace.map((s) => s.spanId));
      for (const s of trace) if (s !== roots[0]) expect(ids.has(s.parentSpanId!), s.name).toBe(true);
      const names = new Set(trace.map((s) => s.name));
      for (const n of [
        'reconcile PodClaim',
        'gather',
        'decide',
        'apply',
        'write update PodClaim',
        'write patchStatus PodClaim',
      ])
        expect(names.has(n), `${c.metadata.name}: ${n}`).toBe(true);
      const writes = trace.filter((s) => s.name.startsWith('write '));
      for (const w of writes) expect(w.kind).toBe(3); // CLIENT
      for (const r of trace.filter((s) => s.name === 'reconcile PodClaim')) {
        expect(r.parentSpanId).toBe(root!.spanId);
        expect(r.attributes).toContainEqual({
          key: 'claimkit.name',
          value: { stringValue: c.metadata.name },
        });
      }
    }
    expect(traceIds.size).toBe(2);
    // Other kinds' reconciles are traced too, each a trace of its own.
    expect(spans.some((s) => s.name === 'reconcile PodPool' && !s.parentSpanId)).toBe(true);
    expect(tracer.dropped).toBe(0);
    expect(tracer.exported).toBe(spans.length);
  });

  it('off by default: no endpoint in the shipped flags, no tracer, nothing sent, no annotation', async () => {
    expect(controllerDefaults().otlpEndpoint).toBeUndefined();
    const rx = await receiver();
    const claims = await bindTwoClaims();
    for (const c of claims) expect(c.metadata.annotations?.[ANNOTATION_TRACEPARENT]).toBeUndefined();
    expect(rx.requests).toEqual([]);
  });

  it('the endpoint from --otlp-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT, the service name from OTEL_SERVICE_NAME', () => {
    expect(parseFlags(['--otlp-endpoint', 'http://c:4318'], {})).toMatchObject({
      otlpEndpoint: 'http://c:4318',
      otlpServiceName: 'claimkit-controller',
    });
    expect(
      parseFlags([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c:4318', OTEL_SERVICE_NAME: 'ctl' }),
    ).toMatchObject({ otlpEndpoint: 'https://c:4318', otlpServiceName: 'ctl' });
    expect(() => parseFlags(['--otlp-endpoint', 'c:4318'], {})).toThrow(
      /--otlp-endpoint: want an http\(s\) URL/,
    );
  });

  it('never blocks or fails: a collector that errors or is gone drops spans; a full queue drops the rest', async () => {
    const rx = await receiver(503);
    const failing = new OtlpTracer({ endpoint: rx.endpoint, intervalMs: 60_000 });
    failing.startSpan('x').end();
    await failing.shutdown();
    expect(rx.requests).toHaveLength(1);
    expect(failing.dropped).toBe(1);
    expect(failing.exported).toBe(0);

    const gone = new OtlpTracer({ endpoint: 'http://127.0.0.1:1', intervalMs: 60_000, timeoutMs: 2000 });
    gone.startSpan('y').end();
    await gone.shutdown();
    expect(gone.dropped).toBe(1);

    const ok = await receiver();
    const small = new OtlpTracer({ endpoint: ok.endpoint, intervalMs: 60_000, maxQueue: 3, maxBatch: 100 });
    for (let i = 0; i < 5; i++)
      small.startSpan(`s${i}`, { attributes: { i, half: i / 2, even: i % 2 === 0 } }).end();
    expect(small.dropped).toBe(2);
    await small.shutdown();
    expect(ok.spans().map((s) => s.name)).toEqual(['s0', 's1', 's2']);
    expect(ok.spans()[1]!.attributes).toEqual([
      { key: 'i', value: { intValue: '1' } },
      { key: 'half', value: { doubleValue: 0.5 } },
      { key: 'even', value: { boolValue: false } },
    ]);

    // A tracer that fails to export still lets the Manager bind (the reconcile never waits on it).
    const claims = await bindTwoClaims(new OtlpTracer({ endpoint: 'http://127.0.0.1:1', intervalMs: 20 }));
    for (const c of claims) expect(c.status?.phase).toBe('Bound');
  });
});
