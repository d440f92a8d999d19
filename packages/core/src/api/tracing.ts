// The tracing port: what a reconcile needs to leave spans (OpenTelemetry's model, none of its code).
// Absent from the deps means off: the reconcile step then runs exactly as without it. The runtime
// (the controller's OTLP exporter, a test's recording tracer) makes the ids, the clock and the export.
// The W3C trace context (traceparent) is how a trace crosses processes: here, an object annotation.
import { fnv1a64 } from './hash.ts';

/** A span's ids: 32 and 16 lowercase hex digits. */
export interface SpanContext {
  traceId: string;
  spanId: string;
}

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

export interface SpanOptions {
  /** The parent span (absent: a new trace). */
  parent?: SpanContext | undefined;
  attributes?: Attributes;
  /** Start time in ms since the epoch (default: the tracer's now). */
  startTime?: number;
  /** This span's own ids, fixed before it started (a claim's root span, named by its annotation). */
  context?: SpanContext;
  /** 'client' for a request to another process (an API write); default 'internal'. */
  kind?: 'internal' | 'client';
}

export interface Span {
  context(): SpanContext;
  setAttribute(key: string, value: AttributeValue): void;
  /** Ends the span (once); with `error` its status is an error with that message. */
  end(outcome?: { error?: string }): void;
}

export interface Tracer {
  startSpan(name: string, opts?: SpanOptions): Span;
  /** The tracer's clock, ms since the epoch (a span started after the fact starts here). */
  now(): number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** A W3C traceparent's ids (version 00; all-zero ids are invalid), or undefined. */
export function parseTraceparent(s: string | undefined): SpanContext | undefined {
  const m = s === undefined ? null : TRACEPARENT.exec(s.trim());
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]! };
}

/** A sampled W3C traceparent. */
export function formatTraceparent(c: SpanContext): string {
  return `00-${c.traceId}-${c.spanId}-01`;
}

/**
 * The root span of an object's trace, derived from its UID: every reconcile of it, in any replica
 * and before or after a restart, finds the same trace without a write to agree on it.
 */
function derivedRootContext(uid: string): SpanContext {
  return {
    traceId: fnv1a64(`trace/${uid}`) + fnv1a64(`id/${uid}`),
    spanId: fnv1a64(`root/${uid}`),
  };
}

/** Where an object's spans go: under its root span, itself under a tool's span when one was given. */
export interface TraceRoot {
  context: SpanContext;
  /** The span a tool named in the annotation at create (the root's parent). */
  parent?: SpanContext;
  /** The annotation value to record with the next spec write (absent: recorded already). */
  record?: string;
}

/** The trace root of an object with this UID and (maybe) this traceparent annotation. */
export function traceRootOf(uid: string, annotation: string | undefined): TraceRoot {
  const derived = derivedRootContext(uid);
  const given = parseTraceparent(annotation);
  if (!given) return { context: derived, record: formatTraceparent(derived) };
  if (given.traceId === derived.traceId && given.spanId === derived.spanId) return { context: derived };
  return { context: { traceId: given.traceId, spanId: derived.spanId }, parent: given };
}
