// Traces out of the controller: core's Tracer port as OTLP/HTTP with the JSON encoding (POST
// <endpoint>/v1/traces, what every OpenTelemetry Collector, Jaeger and Tempo accept), hand-written
// over fetch (no @opentelemetry dependency). Ended spans wait in a bounded queue and go out in
// batches on a timer or when a batch is full; a full queue drops spans (counted), a failed or slow
// export drops its batch: tracing never blocks or fails a reconcile. shutdown() sends what is left.
import { randomBytes } from 'node:crypto';
import {
  type AttributeValue,
  CLAIMKIT_VERSION,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
} from '@claimkit/core';
import { type Logger, silentLogger } from './log.ts';

export interface OtlpTracerOptions {
  /** The OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT): spans are POSTed to <endpoint>/v1/traces. */
  endpoint: string;
  /** The resource's service.name (default claimkit-controller). */
  serviceName?: string;
  /** Ended spans kept while waiting for export; more are dropped (default 4096). */
  maxQueue?: number;
  /** Spans per request (default 512). */
  maxBatch?: number;
  /** Export this often (default 2 s). */
  intervalMs?: number;
  /** Give up on a request after this long (default 10 s). */
  timeoutMs?: number;
  log?: Logger;
  /** The HTTP client (default global fetch). */
  fetch?: typeof fetch;
}

type OtlpValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number };

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: OtlpValue }[];
  status: { code: number; message?: string };
}

/** OTLP's SpanKind: INTERNAL 1, CLIENT 3. Status: UNSET 0, ERROR 2. */
const KIND = { internal: 1, client: 3 } as const;

function otlpValue(v: AttributeValue): OtlpValue {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}

const attributes = (a: Record<string, AttributeValue>) =>
  Object.entries(a).map(([key, v]) => ({ key, value: otlpValue(v) }));

/** ms since the epoch (fractional) as OTLP's nanoseconds, a decimal string (int64 in JSON). */
const nanos = (ms: number) =>
  (BigInt(Math.floor(ms)) * 1_000_000n + BigInt(Math.round((ms % 1) * 1e6))).toString();

export class OtlpTracer implements Tracer {
  /** Spans dropped (queue full or export failed), for tests and logs. */
  dropped = 0;
  /** Spans the collector accepted. */
  exported = 0;
  private readonly url: string;
  private readonly queue: OtlpSpan[] = [];
  private readonly opts: OtlpTracerOptions;
  private readonly log: Logger;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly resource: { attributes: { key: string; value: OtlpValue }[] };
  private inFlight: Promise<void> | undefined;
  private closed = false;

  constructor(opts: OtlpTracerOptions) {
    this.opts = opts;
    this.log = opts.log ?? silentLogger;
    this.url = `${opts.endpoint.replace(/\/+$/, '')}/v1/traces`;
    this.resource = {
      attributes: attributes({
        'service.name': opts.serviceName ?? 'claimkit-controller',
        'service.version': CLAIMKIT_VERSION,
      }),
    };
    this.timer = setInterval(() => void this.flush(), opts.intervalMs ?? 2000);
    this.timer.unref?.();
  }

  now(): number {
    return performance.timeOrigin + performance.now();
  }

  startSpan(name: string, o: SpanOptions = {}): Span {
    const context: SpanContext = o.context ?? {
      traceId: o.parent?.traceId ?? randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
    };
    const start = o.startTime ?? this.now();
    const attrs: Record<string, AttributeValue> = { ...o.attributes };
    let ended = false;
    return {
      context: () => context,
      setAttribute: (k, v) => {
        attrs[k] = v;
      },
      end: (outcome) => {
        if (ended) return;
        ended = true;
        this.enqueue({
          ...context,
          ...(o.parent ? { parentSpanId: o.parent.spanId } : {}),
          name,
          kind: KIND[o.kind ?? 'internal'],
          startTimeUnixNano: nanos(start),
          endTimeUnixNano: nanos(Math.max(start, this.now())),
          attributes: attributes(attrs),
          status: outcome?.error ? { code: 2, message: outcome.error } : { code: 0 },
        });
      },
    };
  }

  /** Sends what is queued (one request at a time; a batch that fails is dropped, never retried). */
  flush(): Promise<void> {
    if (this.inFlight) return this.inFlight.then(() => this.flush());
    if (this.queue.length === 0) return Promise.resolve();
    const batch = this.queue.splice(0, this.opts.maxBatch ?? 512);
    this.inFlight = this.send(batch).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight.then(() => (this.queue.length > 0 && this.closed ? this.flush() : undefined));
  }

  /** Stops the timer and sends what is left (graceful shutdown). */
  async shutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.flush();
  }

  private enqueue(s: OtlpSpan): void {
    if (this.queue.length >= (this.opts.maxQueue ?? 4096)) {
      this.dropped++;
      return;
    }
    this.queue.push(s);
    if (this.queue.length >= (this.opts.maxBatch ?? 512) && !this.inFlight) void this.flush();
  }

  private async send(spans: OtlpSpan[]): Promise<void> {
    const body = JSON.stringify({
      resourceSpans: [
        {
          resource: this.resource,
          scopeSpans: [{ scope: { name: 'claimkit', version: CLAIMKIT_VERSION }, spans }],
        },
      ],
    });
    try {
      const res = await (this.opts.fetch ?? fetch)(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      this.exported += spans.length;
    } catch (e) {
      this.dropped += spans.length;
      this.log.debug('exporting traces failed; spans dropped', {
        url: this.url,
        spans: spans.length,
        error: (e as Error)?.message ?? String(e),
      });
    }
  }
}
