// Structural pruning, defaulting and validation with the CRD schemas, as kube-apiserver does them
// for custom resources: unknown fields pruned, nulls of non-nullable fields dropped, defaults applied
// top-down (a defaulted object gets its nested defaults too), then every violation reported with its
// field path, then the CEL rules of the schemas (rules.ts) unless a violation blocks them.

import type { JSONSchemaProps } from '../api/crd-schema.ts';
import type { FieldCause } from '../api/errors.ts';
import type { Kind } from '../api/types.ts';
import { type CustomKind, KIND_SCHEMAS, schemaFor } from './kinds.ts';
import { rulesOf, validateRules } from './rules.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const has = (o: Json, k: string): boolean => Object.hasOwn(o, k) && o[k] !== undefined;

/**
 * The field.ErrorType of a schema violation. The server skips the CEL rules when one of the
 * blocking types is present (hasBlockingErr in apiextensions-apiserver's strategy.go).
 */
type ViolationType =
  | 'Invalid'
  | 'TypeInvalid'
  | 'NotSupported'
  | 'Required'
  | 'TooLong'
  | 'TooMany'
  | 'Duplicate';
const BLOCKING: ReadonlySet<ViolationType> = new Set([
  'TypeInvalid',
  'NotSupported',
  'Required',
  'TooLong',
  'TooMany',
]);

/** The cause the server adds instead of the rules' results when a violation blocks them. */
export const RULES_NOT_CHECKED: FieldCause = {
  field: '<nil>',
  message:
    'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};

interface Violations {
  causes: FieldCause[];
  blocking: boolean;
}

function report(out: Violations, type: ViolationType, field: string, message: string): void {
  out.causes.push({ field, message });
  if (BLOCKING.has(type)) out.blocking = true;
}

// ---------------- pruning and defaulting ----------------

function preservesUnknown(s: JSONSchemaProps): boolean {
  return s['x-kubernetes-preserve-unknown-fields'] === true;
}

/** Drops fields the schema does not know (pruning), in place. The root `metadata` is left alone. */
function prune(value: unknown, s: JSONSchemaProps, isRoot = false): void {
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
function applyDefaults(value: unknown, s: JSONSchemaProps): void {
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

/** Every violation of `s` by `value` at `path` (the OpenAPI part; CEL rules are rules.ts'). */
function validateValue(
  value: unknown,
  s: JSONSchemaProps,
  path: string,
  out: Violations = { causes: [], blocking: false },
): Violations {
  if (value === null && s.nullable) return out;
  if (!typeOk(value, s.type)) {
    report(
      out,
      'TypeInvalid',
      path,
      `Invalid value: ${JSON.stringify(typeName(value))}: ${path} in body must be of type ${s.type}: ${JSON.stringify(typeName(value))}`,
    );
    return out;
  }
  if (s.enum && !s.enum.includes(value as string | number)) {
    report(
      out,
      'NotSupported',
      path,
      `Unsupported value: ${shown(value)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
    );
  }
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) {
      report(
        out,
        'Invalid',
        path,
        `Invalid value: ${value}: should be greater than or equal to ${s.minimum}`,
      );
    }
    if (s.maximum !== undefined && value > s.maximum) {
      report(out, 'Invalid', path, `Invalid value: ${value}: should be less than or equal to ${s.maximum}`);
    }
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    if (s.minLength !== undefined && len < s.minLength) {
      report(
        out,
        'Invalid',
        path,
        `Invalid value: ${shown(value)}: should be at least ${s.minLength} chars long`,
      );
    }
    if (s.maxLength !== undefined && len > s.maxLength) {
      report(out, 'TooLong', path, `Too long: may not be more than ${s.maxLength} bytes`);
    }
    if (s.pattern !== undefined && !new RegExp(s.pattern).test(value)) {
      report(out, 'Invalid', path, `Invalid value: ${shown(value)}: should match '${s.pattern}'`);
    }
    if (s.format === 'date-time' && (!RFC3339.test(value) || Number.isNaN(Date.parse(value)))) {
      report(out, 'Invalid', path, `Invalid value: ${shown(value)}: must be of type date-time`);
    }
  }
  if (Array.isArray(value)) {
    if (s.minItems !== undefined && value.length < s.minItems) {
      report(
        out,
        'Invalid',
        path,
        `Invalid value: ${value.length}: should have at least ${s.minItems} items`,
      );
    }
    if (s.maxItems !== undefined && value.length > s.maxItems) {
      report(out, 'TooMany', path, `Too many: ${value.length}: must have at most ${s.maxItems} items`);
    }
    if (s['x-kubernetes-list-type'] === 'map') {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      const seen = new Set<string>();
      value.forEach((item, i) => {
        const k = JSON.stringify(keys.map((key) => (isObject(item) ? item[key] : undefined)));
        if (seen.has(k)) report(out, 'Duplicate', `${path}[${i}]`, `Duplicate value: ${k}`);
        seen.add(k);
      });
    }
    if (s.items) {
      value.forEach((item, i) => {
        validateValue(item, s.items!, `${path}[${i}]`, out);
      });
    }
  }
  if (isObject(value)) {
    const n = Object.keys(value).length;
    if (s.maxProperties !== undefined && n > s.maxProperties) {
      report(out, 'TooMany', path, `Too many: ${n}: must have at most ${s.maxProperties} items`);
    }
    for (const r of s.required ?? []) {
      if (!has(value, r)) report(out, 'Required', join(path, r), 'Required value');
    }
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const prop = s.properties?.[k] ?? s.additionalProperties;
      if (prop) validateValue(v, prop, join(path, k), out);
    }
  }
  return out;
}

// ---------------- per kind ----------------

/** Prunes and defaults a custom object in place, as the API server does on every write. */
export function defaultObject(kind: CustomKind | Kind, obj: unknown): void {
  const k = schemaFor(kind);
  if (!k) return;
  prune(obj, k.schema, true);
  applyDefaults(obj, k.schema);
}

/**
 * Every violation of a custom object (after defaulting), schema first, then the CEL rules, which
 * see `old` on an update (transition rules, ratcheting). metadata is ObjectMeta, which the model
 * validates itself; root rules see only its name and generateName, as on the server.
 */
export function validateObject(kind: CustomKind | Kind, obj: unknown, old?: unknown): FieldCause[] {
  const k = schemaFor(kind);
  if (!k) return [];
  const { metadata, ...rest } = (obj ?? {}) as Json;
  const found = validateValue(rest, k.schema, '');
  if (found.blocking)
    return rulesOf(k.schema).length > 0 ? [...found.causes, RULES_NOT_CHECKED] : found.causes;
  const root = (o: Json) => ({ ...o, metadata: visibleMetadata(o.metadata) });
  const oldRoot = isObject(old) ? root(old) : undefined;
  return validateRules(root({ ...rest, metadata }), k.schema, '', oldRoot, found.causes);
}

function visibleMetadata(m: unknown): Json {
  const out: Json = {};
  if (isObject(m)) {
    if (typeof m.name === 'string') out.name = m.name;
    if (typeof m.generateName === 'string') out.generateName = m.generateName;
  }
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
