// Plain JSON <-> CEL values, typed as the Kubernetes API server types them. JSON has one number
// type; Kubernetes CEL has int (schema `integer`), double (schema `number`) and timestamp (schema
// string with `format: date-time`). @bufbuild/cel maps a JS number to double and a bigint to int,
// and refuses arithmetic that mixes them (`double + int` has no overload), so integers must arrive
// as bigint: `self.epoch + 1` and `self.epoch >= oldSelf.epoch` then behave as on the server.
import { type CelValue, celList, celMap, isCelList, isCelMap, isCelType, isCelUint } from '@bufbuild/cel';
import { create, isMessage } from '@bufbuild/protobuf';
import { type Duration, DurationSchema, type Timestamp, TimestampSchema } from '@bufbuild/protobuf/wkt';
import type { JSONSchemaProps } from '../api/crd-schema.ts';

/** A value already converted for CEL (e.g. a schema-typed binding): passed to the evaluator as is. */
export class CelTyped {
  readonly celValue: unknown;
  constructor(celValue: unknown) {
    this.celValue = celValue;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;

const RFC3339 = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 date-time as a protobuf Timestamp (CEL `timestamp`), or undefined if it is not one. */
function parseTimestamp(s: string): Timestamp | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  const nanos = Number((m[2] ?? '').padEnd(9, '0'));
  return create(TimestampSchema, { seconds: BigInt(Math.floor(ms / 1000)), nanos });
}

function formatTimestamp(t: Timestamp): string {
  const base = new Date(Number(t.seconds) * 1000).toISOString().slice(0, 19);
  const frac = t.nanos === 0 ? '' : `.${String(t.nanos).padStart(9, '0').replace(/0+$/, '')}`;
  return `${base}${frac}Z`;
}

function formatDuration(d: Duration): string {
  const total = Number(d.seconds) + d.nanos / 1e9;
  return `${total}s`;
}

/**
 * `value` (plain JSON) as the API server presents it to CEL under `schema`: integer -> int (bigint),
 * number -> double, string with format date-time -> timestamp, objects and arrays converted member
 * by member. Without a schema (or under x-kubernetes-preserve-unknown-fields), an integral number
 * is an int, as in the server's unstructured JSON, and any other number a double.
 */
export function toCelValue(value: unknown, schema?: JSONSchemaProps): unknown {
  if (value instanceof CelTyped) return value.celValue;
  if (value === undefined || value === null) return value;
  if (typeof value === 'bigint' || isCelList(value) || isCelMap(value) || isCelUint(value)) return value;
  if (typeof value === 'number') {
    if (schema?.type === 'number') return value;
    if (Number.isInteger(value) && (schema?.type === 'integer' || schema?.type === undefined)) {
      return BigInt(value);
    }
    return value;
  }
  if (typeof value === 'string') {
    if (schema?.type === 'string' && schema.format === 'date-time') return parseTimestamp(value) ?? value;
    return value;
  }
  // CEL lists and maps, built once: @bufbuild/cel would rebuild a Map from a plain object on every
  // field access, for every rule.
  if (Array.isArray(value)) return celList(value.map((v) => toCelValue(v, schema?.items) as CelValue));
  if (isPlainObject(value)) {
    const out = new Map<string, CelValue>();
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      out.set(k, toCelValue(v, schema?.properties?.[k] ?? schema?.additionalProperties) as CelValue);
    }
    return celMap(out);
  }
  return value;
}

/**
 * A CEL result as plain JSON: int and uint -> number (a bigint outside the safe integer range stays
 * a bigint rather than lose digits), list -> array, map -> object (keys as strings), timestamp ->
 * RFC 3339 string, duration -> "<seconds>s", a type -> its name.
 */
export function fromCelValue(v: CelValue | unknown): unknown {
  if (typeof v === 'bigint') return toNumber(v);
  if (isCelUint(v)) return toNumber(v.value);
  if (isCelList(v)) return [...v].map(fromCelValue);
  if (isCelMap(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of v) out[String(isCelUint(k) ? k.value : k)] = fromCelValue(val);
    return out;
  }
  if (isCelType(v)) return v.name;
  const msg = reflectMessage(v);
  if (msg && isMessage(msg, TimestampSchema)) return formatTimestamp(msg);
  if (msg && isMessage(msg, DurationSchema)) return formatDuration(msg);
  return v;
}

function toNumber(b: bigint): number | bigint {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/** The protobuf message inside a ReflectMessage (what @bufbuild/cel returns for timestamps). */
function reflectMessage(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return undefined;
  if ('$typeName' in v) return v;
  const inner = (v as { message?: unknown }).message;
  return inner !== null && typeof inner === 'object' && '$typeName' in inner ? inner : undefined;
}
