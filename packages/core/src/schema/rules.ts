// The x-kubernetes-validations rules of a schema, evaluated as kube-apiserver (1.37) does it for
// custom resources (apiextensions-apiserver pkg/apiserver/schema/cel/validation.go):
// - a rule runs with `self` bound to the value at its schema node, only where that value is present
//   and not null;
// - a transition rule (one that reads `oldSelf`) runs only on update, and only when an old value is
//   correlated with the node: the same property of an object or map, or the item with the same keys
//   of a list-type=map list; other list items have none;
// - a failed rule that does not read oldSelf is ratcheted (dropped, a warning on the server) when
//   its node is unchanged from the correlated old value, so an object stored before a rule existed
//   can still be updated elsewhere;
// - the cause is reported at the node path plus `fieldPath`, with `messageExpression`, `message` or
//   "failed rule: <rule>" as its detail and `reason` as its type.

import { isCelMap } from '@bufbuild/cel';
import type { JSONSchemaProps, ValidationRule } from '../api/crd-schema.ts';
import type { FieldCause } from '../api/errors.ts';
import { deepEqual } from '../api/json.ts';
import { type CelProgram, compileCel } from '../cel/program.ts';
import { CelTyped, toCelValue } from '../cel/values.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

interface CompiledRule {
  rule: ValidationRule;
  program: CelProgram;
  message?: CelProgram;
  transition: boolean;
  /** fieldPath without its leading dot, as the server normalizes it. */
  fieldPath: string;
}

const compiled = new WeakMap<ValidationRule, CompiledRule>();

/** A schema rule, compiled once; a rule core cannot evaluate is a programming error (thrown). */
export function compileRule(rule: ValidationRule): CompiledRule {
  const hit = compiled.get(rule);
  if (hit) return hit;
  const program = compileCel(rule.rule);
  const c: CompiledRule = {
    rule,
    program,
    transition: program.variables.has('oldSelf'),
    fieldPath: (rule.fieldPath ?? '').replace(/^\./, ''),
  };
  if (rule.messageExpression) c.message = compileCel(rule.messageExpression);
  for (const v of [...program.variables, ...(c.message?.variables ?? [])]) {
    if (v !== 'self' && v !== 'oldSelf') throw new Error(`CEL rule ${rule.rule} reads unknown variable ${v}`);
  }
  compiled.set(rule, c);
  return c;
}

/** Every rule of `schema` and its subschemas. */
export function rulesOf(schema: JSONSchemaProps): ValidationRule[] {
  const out: ValidationRule[] = [...(schema['x-kubernetes-validations'] ?? [])];
  for (const p of Object.values(schema.properties ?? {})) out.push(...rulesOf(p));
  if (schema.items) out.push(...rulesOf(schema.items));
  if (schema.additionalProperties) out.push(...rulesOf(schema.additionalProperties));
  return out;
}

const withRules = new WeakMap<JSONSchemaProps, boolean>();

/** Whether `s` or a subschema has rules (cached: the walk asks at every node of every write). */
function hasRules(s: JSONSchemaProps): boolean {
  let v = withRules.get(s);
  if (v === undefined) {
    v = rulesOf(s).length > 0;
    withRules.set(s, v);
  }
  return v;
}

/** A node's value and its correlated old value, each with its CEL form once converted. */
interface NodeValues {
  value: unknown;
  old: unknown;
  /** CEL forms, derived from the parent's where it had them (each object converted once per write). */
  cel?: unknown;
  oldCel?: unknown;
}

/**
 * The causes of every failed rule under `s` for `value` at `path` (path '' is the object root).
 * `old` is the correlated old value (undefined on create or when there is none).
 */
export function validateRules(
  value: unknown,
  s: JSONSchemaProps,
  path: string,
  old: unknown,
  out: FieldCause[] = [],
): FieldCause[] {
  walk({ value, old }, s, path, out, () => false);
  return out;
}

/**
 * One node and its subtree. A node without an old value of its own counts as unchanged, for
 * ratcheting, when its nearest correlated ancestor is (`ancestorUnchanged`; in practice only the
 * items of an unchanged list that correlates no items).
 */
function walk(
  n: NodeValues,
  s: JSONSchemaProps,
  path: string,
  out: FieldCause[],
  ancestorUnchanged: () => boolean,
) {
  const { value, old } = n;
  if (value === undefined || value === null || !hasRules(s)) return;
  let memo: boolean | undefined;
  // deepEqual only where asked: a failed rule, or a child without an old value.
  const unchanged = (): boolean => {
    memo ??= old !== undefined ? deepEqual(value, old) : ancestorUnchanged();
    return memo;
  };
  const rules = s['x-kubernetes-validations'] ?? [];
  if (rules.length > 0) {
    n.cel ??= toCelValue(value, s);
    if (old !== undefined) n.oldCel ??= toCelValue(old, s);
    const bindings = {
      self: new CelTyped(n.cel),
      ...(old === undefined ? {} : { oldSelf: new CelTyped(n.oldCel) }),
    };
    for (const rule of rules) {
      const c = compileRule(rule);
      if (c.transition && old === undefined) continue;
      const cause = evaluateRule(c, bindings, value, s, path);
      if (cause && (c.transition || !unchanged())) out.push(cause);
    }
  }
  if (Array.isArray(value) && s.items) {
    const oldItems = correlatedItems(s, old);
    value.forEach((item, i) => {
      walk({ value: item, old: oldItems(item) }, s.items!, `${path}[${i}]`, out, unchanged);
    });
  } else if (isObject(value)) {
    const oldObj = isObject(old) ? old : undefined;
    for (const [k, v] of Object.entries(value)) {
      const prop = s.properties?.[k] ?? s.additionalProperties;
      if (!prop || !hasRules(prop)) continue;
      const key = s.properties?.[k] ? join(path, k) : `${path}[${k}]`;
      const child: NodeValues = { value: v, old: oldObj && Object.hasOwn(oldObj, k) ? oldObj[k] : undefined };
      if (isCelMap(n.cel)) child.cel = celChild(n.cel, k);
      if (child.old !== undefined && isCelMap(n.oldCel)) child.oldCel = celChild(n.oldCel, k);
      walk(child, prop, key, out, unchanged);
    }
  }
}

/**
 * A map's child in CEL form, when the CEL library can give it outside an evaluation (a list, for
 * one, it cannot: the child is then converted on its own, only if it has rules).
 */
function celChild(m: { get(k: string): unknown }, k: string): unknown {
  try {
    return m.get(k);
  } catch {
    return undefined;
  }
}

/** Old items of a list-type=map list, by their keys; other lists correlate nothing. */
function correlatedItems(s: JSONSchemaProps, old: unknown): (item: unknown) => unknown {
  const keys = s['x-kubernetes-list-map-keys'];
  if (s['x-kubernetes-list-type'] !== 'map' || !keys || !Array.isArray(old)) return () => undefined;
  const keyOf = (item: unknown) => JSON.stringify(keys.map((k) => (isObject(item) ? item[k] : undefined)));
  const byKey = new Map(old.map((o) => [keyOf(o), o]));
  return (item) => byKey.get(keyOf(item));
}

function join(path: string, k: string): string {
  return path === '' ? k : `${path}.${k}`;
}

function evaluateRule(
  c: CompiledRule,
  bindings: Record<string, CelTyped>,
  value: unknown,
  s: JSONSchemaProps,
  path: string,
): FieldCause | undefined {
  const out = c.program.evaluate(bindings);
  const typeName = JSON.stringify(s.type ?? 'object');
  if (!out.ok) {
    return {
      field: path,
      message: `Invalid value: ${typeName}: ${out.error.message} evaluating rule: ${ruleErrorString(c.rule)}`,
    };
  }
  if (out.value === true) return undefined;
  if (out.value !== false) {
    return {
      field: path,
      message: `Invalid value: ${typeName}: rule did not evaluate to a bool: ${ruleErrorString(c.rule)}`,
    };
  }
  const detail = messageFromExpression(c, bindings) ?? messageOrDefault(c.rule);
  const field = c.fieldPath === '' ? path : join(path, c.fieldPath);
  return { field, message: causeMessage(c.rule.reason, value, s, detail) };
}

function messageFromExpression(c: CompiledRule, bindings: Record<string, unknown>): string | undefined {
  if (!c.message) return undefined;
  const out = c.message.evaluate(bindings);
  if (!out.ok || typeof out.value !== 'string') return undefined;
  const msg = out.value.trim();
  return msg === '' || msg.includes('\n') ? undefined : msg;
}

function messageOrDefault(rule: ValidationRule): string {
  return rule.message ? rule.message.trim() : `failed rule: ${ruleErrorString(rule)}`;
}

function ruleErrorString(rule: ValidationRule): string {
  return rule.message ? rule.message.trim() : rule.rule.trim();
}

/** field.Error.ErrorBody() of the error the server builds: objects and arrays omit their value. */
function causeMessage(
  reason: ValidationRule['reason'],
  value: unknown,
  s: JSONSchemaProps,
  detail: string,
): string {
  const omit = s.type === 'object' || s.type === 'array';
  const shown = omit
    ? ''
    : `: ${typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value)}`;
  switch (reason) {
    case 'FieldValueForbidden':
      return `Forbidden: ${detail}`;
    case 'FieldValueRequired':
      return `Required value: ${detail}`;
    case 'FieldValueDuplicate':
      return `Duplicate value${shown}`;
    default:
      return `Invalid value${shown}: ${detail}`;
  }
}
