// Structural pruning, defaulting and validation with the CRD schemas, as kube-apiserver does them
// for custom resources: unknown fields pruned, nulls of non-nullable fields dropped, defaults applied
// top-down (a defaulted object gets its nested defaults too), then every violation reported with its
// field path. The CEL rules of the schemas are evaluated by hand (`CEL_RULES`); a rule without an
// implementation here is a test failure, so the CRDs and the model cannot drift apart.
import type { FieldCause } from '../api/errors.ts';
import { deepEqual } from '../api/json.ts';
import type { Kind } from '../api/types.ts';
import { RULE_HTTP_NEEDS_URL } from './capture.ts';
import { type CustomKind, KIND_SCHEMAS, schemaFor } from './kinds.ts';
import { RULE_IMMUTABLE, RULE_SOURCE_NOT_POD } from './pod-claim.ts';
import { RULE_MIN_IDLE_LE_MAX_PODS } from './pod-pool.ts';
import type { JSONSchemaProps, ValidationRule } from './types.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const has = (o: Json, k: string): boolean => Object.hasOwn(o, k) && o[k] !== undefined;

/** The CEL rules the schemas use, as code: `self` and, for transition rules, `oldSelf`. */
export const CEL_RULES: Record<
  string,
  { transition: boolean; check: (self: unknown, old?: unknown) => boolean }
> = {
  [RULE_IMMUTABLE]: { transition: true, check: (self, old) => deepEqual(self, old) },
  [RULE_SOURCE_NOT_POD]: {
    transition: false,
    check: (self) => {
      const s = self as Json;
      return !has(s, 'sourcePod') || !has(s, 'podName') || s.sourcePod === '' || s.sourcePod !== s.podName;
    },
  },
  [RULE_HTTP_NEEDS_URL]: {
    transition: false,
    check: (self) => {
      const s = self as Json;
      return s.type !== 'Http' || (has(s, 'url') && s.url !== '');
    },
  },
  [RULE_MIN_IDLE_LE_MAX_PODS]: {
    transition: false,
    check: (self) => {
      const s = self as Json;
      // Both are defaulted before validation; a type error is reported by the schema instead.
      if (typeof s.minIdle !== 'number' || typeof s.maxPods !== 'number') return true;
      return s.minIdle <= s.maxPods;
    },
  },
};

// ---------------- pruning and defaulting ----------------

function preservesUnknown(s: JSONSchemaProps): boolean {
  return s['x-kubernetes-preserve-unknown-fields'] === true;
}

/** Drops fields the schema does not know (pruning), in place. The root `metadata` is left alone. */
export function prune(value: unknown, s: JSONSchemaProps, isRoot = false): void {
  if (Array.isArray(value)) {
    if (s.items) for (const v of value) prune(v, s.items);
    return;
  }
  if (!isObject(value)) return;
  for (const k of Object.keys(value)) {
    if (isRoot && k === 'metadata') continue;
    const prop = s.properties?.[k];
    if (prop) prune(value[k], prop);
    else if (s.additionalProperties) prune(value[k], s.additionalProperties);
    else if (!preservesUnknown(s)) delete value[k];
  }
}

/** Applies schema defaults in place; nulls of non-nullable fields are dropped first. */
export function applyDefaults(value: unknown, s: JSONSchemaProps): void {
  if (Array.isArray(value)) {
    if (s.items) for (const v of value) applyDefaults(v, s.items);
    return;
  }
  if (!isObject(value)) return;
  for (const [k, prop] of Object.entries(s.properties ?? {})) {
    if (value[k] === null && !prop.nullable) delete value[k];
    if (!has(value, k) && prop.default !== undefined) value[k] = structuredCloneJson(prop.default);
  }
  for (const [k, v] of Object.entries(value)) {
    const prop = s.properties?.[k] ?? s.additionalProperties;
    if (prop) applyDefaults(v, prop);
  }
}

function structuredCloneJson<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

// ---------------- validation ----------------

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return '"null"';
  return JSON.stringify(typeName(v));
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeOk(v: unknown, t: JSONSchemaProps['type']): boolean {
  switch (t) {
    case undefined:
      return true;
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
  }
}

function join(path: string, k: string): string {
  return path === '' ? k : `${path}.${k}`;
}

/**
 * Every violation of `s` by `value` at `path`. `old` is the value at the same path before an update
 * (undefined on create or when the field is new): transition rules run only when it exists.
 */
export function validateValue(
  value: unknown,
  s: JSONSchemaProps,
  path: string,
  old?: unknown,
  out: FieldCause[] = [],
): FieldCause[] {
  if (value === null && s.nullable) return out;
  if (!typeOk(value, s.type)) {
    out.push({
      field: path,
      message: `Invalid value: ${JSON.stringify(typeName(value))}: ${path} in body must be of type ${s.type}: ${JSON.stringify(typeName(value))}`,
    });
    return out;
  }
  if (s.enum && !s.enum.includes(value as string | number)) {
    out.push({
      field: path,
      message: `Unsupported value: ${shown(value)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
    });
  }
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) {
      out.push({
        field: path,
        message: `Invalid value: ${value}: should be greater than or equal to ${s.minimum}`,
      });
    }
    if (s.maximum !== undefined && value > s.maximum) {
      out.push({
        field: path,
        message: `Invalid value: ${value}: should be less than or equal to ${s.maximum}`,
      });
    }
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    if (s.minLength !== undefined && len < s.minLength) {
      out.push({
        field: path,
        message: `Invalid value: ${shown(value)}: should be at least ${s.minLength} chars long`,
      });
    }
    if (s.maxLength !== undefined && len > s.maxLength) {
      out.push({ field: path, message: `Too long: may not be more than ${s.maxLength} bytes` });
    }
    if (s.pattern !== undefined && !new RegExp(s.pattern).test(value)) {
      out.push({ field: path, message: `Invalid value: ${shown(value)}: should match '${s.pattern}'` });
    }
    if (s.format === 'date-time' && (!RFC3339.test(value) || Number.isNaN(Date.parse(value)))) {
      out.push({ field: path, message: `Invalid value: ${shown(value)}: must be of type date-time` });
    }
  }
  if (Array.isArray(value)) {
    if (s.minItems !== undefined && value.length < s.minItems) {
      out.push({
        field: path,
        message: `Invalid value: ${value.length}: should have at least ${s.minItems} items`,
      });
    }
    if (s.maxItems !== undefined && value.length > s.maxItems) {
      out.push({ field: path, message: `Too many: ${value.length}: must have at most ${s.maxItems} items` });
    }
    if (s['x-kubernetes-list-type'] === 'map') {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      const seen = new Set<string>();
      value.forEach((item, i) => {
        const k = JSON.stringify(keys.map((key) => (isObject(item) ? item[key] : undefined)));
        if (seen.has(k)) out.push({ field: `${path}[${i}]`, message: `Duplicate value: ${k}` });
        seen.add(k);
      });
    }
    if (s.items) {
      value.forEach((item, i) => {
        validateValue(item, s.items!, `${path}[${i}]`, undefined, out);
      });
    }
  }
  if (isObject(value)) {
    for (const r of s.required ?? []) {
      if (!has(value, r)) out.push({ field: join(path, r), message: 'Required value' });
    }
    const oldObj = isObject(old) ? old : undefined;
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const prop = s.properties?.[k] ?? s.additionalProperties;
      if (prop) validateValue(v, prop, join(path, k), oldObj?.[k], out);
    }
  }
  for (const rule of s['x-kubernetes-validations'] ?? []) checkRule(rule, value, old, path, out);
  return out;
}

function checkRule(rule: ValidationRule, self: unknown, old: unknown, path: string, out: FieldCause[]): void {
  const impl = CEL_RULES[rule.rule];
  if (!impl) throw new Error(`CEL rule without an implementation in core: ${rule.rule}`);
  if (impl.transition && old === undefined) return;
  if (impl.check(self, old)) return;
  const field = rule.fieldPath ? path + rule.fieldPath : path;
  out.push({ field, message: `Invalid value: ${JSON.stringify(typeName(self))}: ${rule.message}` });
}

// ---------------- per kind ----------------

/** Prunes and defaults a custom object in place, as the API server does on every write. */
export function defaultObject(kind: CustomKind | Kind, obj: unknown): void {
  const k = schemaFor(kind);
  if (!k) return;
  prune(obj, k.schema, true);
  applyDefaults(obj, k.schema);
}

/** Every schema violation of a custom object (after defaulting); `old` enables transition rules. */
export function validateObject(kind: CustomKind | Kind, obj: unknown, old?: unknown): FieldCause[] {
  const k = schemaFor(kind);
  if (!k) return [];
  const out: FieldCause[] = [];
  // metadata is ObjectMeta, validated by the model itself; validate the rest.
  const { metadata: _m, ...rest } = (obj ?? {}) as Json;
  const oldRest = isObject(old) ? (({ metadata: _o, ...r }) => r)(old) : undefined;
  validateValue(rest, { ...k.schema, properties: { ...k.schema.properties } }, '', oldRest, out);
  return out;
}

type ModelObj = { metadata: { name: string } } & Record<string, unknown>;

/** `new ApiModel(schemaModelOptions())` rejects and defaults what the real server does with deploy/crds. */
export function schemaModelOptions(): {
  defaulters: Partial<Record<Kind, (obj: ModelObj) => void>>;
  validators: Partial<Record<Kind, (obj: ModelObj, old?: ModelObj) => FieldCause[]>>;
} {
  const defaulters: Partial<Record<Kind, (obj: ModelObj) => void>> = {};
  const validators: Partial<Record<Kind, (obj: ModelObj, old?: ModelObj) => FieldCause[]>> = {};
  for (const kind of Object.keys(KIND_SCHEMAS) as CustomKind[]) {
    defaulters[kind] = (obj) => defaultObject(kind, obj);
    validators[kind] = (obj, old) => validateObject(kind, obj, old);
  }
  return { defaulters, validators };
}
