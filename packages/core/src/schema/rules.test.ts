// rules.ts evaluates x-kubernetes-validations as kube-apiserver does; these schemas are synthetic so
// that each semantic (transition rules, correlation, ratcheting, reasons, messages) is pinned alone.
import { describe, expect, it } from 'vitest';
import type { JSONSchemaProps, ValidationRule } from '../api/crd-schema.ts';
import { validateRules } from './rules.ts';

const immutable: ValidationRule = { rule: 'self == oldSelf', message: 'is immutable' };
const positive: ValidationRule = { rule: 'self.n > 0', message: 'n must be positive', fieldPath: '.n' };

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    name: { type: 'string', 'x-kubernetes-validations': [immutable] },
    count: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 10', message: 'too many' }] },
    spec: { type: 'object', properties: { n: { type: 'integer' } }, 'x-kubernetes-validations': [positive] },
    labels: {
      type: 'object',
      additionalProperties: { type: 'string', 'x-kubernetes-validations': [immutable] },
    },
    items: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['key'],
      items: {
        type: 'object',
        properties: { key: { type: 'string' }, v: { type: 'integer' } },
        'x-kubernetes-validations': [{ rule: 'self.v >= oldSelf.v', message: 'v never decreases' }],
      },
    },
    plain: {
      type: 'array',
      items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self != oldSelf', message: 'never' }] },
    },
  },
};

const check = (value: unknown, old?: unknown) => validateRules(value, schema, '', old);

describe('where rules run', () => {
  it('a rule runs with self at its node; a cause names the node, or fieldPath under it', () => {
    // In the value's key order (the server walks a Go map: its order is random).
    expect(check({ count: 12, spec: { n: 0 } })).toEqual([
      { field: 'count', message: 'Invalid value: 12: too many' },
      { field: 'spec.n', message: 'Invalid value: n must be positive' },
    ]);
    expect(check({ spec: { n: 1 }, count: 9 })).toEqual([]);
  });

  it('absent and null values are not validated', () => {
    expect(check({ spec: null, count: undefined })).toEqual([]);
  });

  it('a transition rule runs only on update and only where the old value exists', () => {
    expect(check({ name: 'b' })).toEqual([]);
    expect(check({ name: 'b' }, {})).toEqual([]);
    expect(check({ name: 'b' }, { name: 'a' })).toEqual([
      { field: 'name', message: 'Invalid value: "b": is immutable' },
    ]);
    expect(check({ name: 'a' }, { name: 'a' })).toEqual([]);
  });

  it('map entries correlate by key; list-type=map items by their keys; other list items not at all', () => {
    expect(check({ labels: { a: 'x', b: 'new' } }, { labels: { a: 'y' } })).toEqual([
      { field: 'labels[a]', message: 'Invalid value: "x": is immutable' },
    ]);
    const old = {
      items: [
        { key: 'k1', v: 5 },
        { key: 'k2', v: 5 },
      ],
    };
    expect(
      check(
        {
          items: [
            { key: 'k2', v: 4 },
            { key: 'k1', v: 6 },
            { key: 'k3', v: 0 },
          ],
        },
        old,
      ),
    ).toEqual([{ field: 'items[0]', message: 'Invalid value: v never decreases' }]);
    expect(check({ plain: [1, 2] }, { plain: [1, 2] })).toEqual([]);
  });
});

describe('ratcheting', () => {
  it('a failing rule without oldSelf is dropped where the node is unchanged, not where it changed', () => {
    expect(check({ spec: { n: 0 }, count: 12 }, { spec: { n: 0 }, count: 12 })).toEqual([]);
    expect(check({ spec: { n: -1 }, count: 12 }, { spec: { n: 0 }, count: 12 })).toEqual([
      { field: 'spec.n', message: 'Invalid value: n must be positive' },
    ]);
  });

  it('a new node is never ratcheted; items of an unchanged plain list are', () => {
    const list: JSONSchemaProps = {
      type: 'array',
      items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0', message: 'positive' }] },
    };
    expect(validateRules([0], list, 'l', [0])).toEqual([]);
    expect(validateRules([0, 0], list, 'l', [0])).toHaveLength(2);
    expect(check({ count: 12 }, {})).toHaveLength(1);
  });
});

describe('messages', () => {
  const one = (rule: ValidationRule, type: JSONSchemaProps['type'], value: unknown) =>
    validateRules(value, { type, 'x-kubernetes-validations': [rule] }, 'f', undefined)[0]?.message;

  it('reason picks the error type; objects and arrays omit their value', () => {
    const no = { rule: 'false', message: ' no ' };
    expect(one(no, 'string', 'x')).toBe('Invalid value: "x": no');
    expect(one(no, 'boolean', true)).toBe('Invalid value: true: no');
    expect(one(no, 'object', {})).toBe('Invalid value: no');
    expect(one(no, 'array', [])).toBe('Invalid value: no');
    expect(one({ ...no, reason: 'FieldValueForbidden' }, 'string', 'x')).toBe('Forbidden: no');
    expect(one({ ...no, reason: 'FieldValueRequired' }, 'string', 'x')).toBe('Required value: no');
    expect(one({ ...no, reason: 'FieldValueDuplicate' }, 'string', 'x')).toBe('Duplicate value: "x"');
  });

  it('messageExpression when it yields a one-line string, else message, else the rule', () => {
    const rule = { rule: 'self < 3', message: 'static', messageExpression: "'got ' + string(self)" };
    expect(one(rule, 'integer', 5)).toBe('Invalid value: 5: got 5');
    expect(one({ ...rule, messageExpression: "''" }, 'integer', 5)).toBe('Invalid value: 5: static');
    expect(one({ rule: 'self < 3', message: '' }, 'integer', 5)).toBe(
      'Invalid value: 5: failed rule: self < 3',
    );
  });

  it('an evaluation error is a cause on the node, naming the rule', () => {
    expect(one({ rule: 'self.missing == 1', message: 'm' }, 'object', {})).toMatch(
      /^Invalid value: "object": .* evaluating rule: m$/,
    );
  });

  it('a rule core cannot compile, or one reading another variable, throws (a programming error)', () => {
    expect(() => one({ rule: 'self.isSorted()', message: 'm' }, 'array', [])).toThrow(/not supported/);
    expect(() => one({ rule: 'object.x == 1', message: 'm' }, 'object', {})).toThrow(
      /unknown variable object/,
    );
  });
});
