// managedFields cut from the text before the parse: the same objects as parsing everything and
// deleting them after, whatever the strings hold; anything not in the server's shape left alone.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { withoutManagedFields } from './managed-fields.ts';

/** What the cut must equal: every member named managedFields whose value is an array, deleted. */
function dropped(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropped);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'managedFields' && Array.isArray(x)) continue;
    // As JSON.parse makes them: an own property even when the key is __proto__.
    Object.defineProperty(out, k, {
      value: dropped(x),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

const parsedWithout = (text: string) => JSON.parse(withoutManagedFields(text)) as unknown;

// A pod as the API server writes it: managedFields last in metadata, with escaped JSON in keys.
const pod = {
  metadata: {
    name: 'warm-25nmj',
    namespace: 'ns',
    labels: { 'claimkit.dev/pool': 'warm' },
    managedFields: [
      {
        manager: 'claimkit-controller',
        operation: 'Update',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:claimkit.dev/pool': {} } },
          'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {} } } },
        },
      },
      {
        manager: 'kwok',
        subresource: 'status',
        fieldsV1: { 'f:status': { 'f:podIPs': { 'k:{"ip":"10.244.1.153"}': { 'f:ip': {} } } } },
      },
    ],
  },
  spec: { containers: [{ name: 'main', image: 'pause' }] },
  status: { phase: 'Running' },
};

describe('withoutManagedFields', () => {
  test('a pod, a watch event and a list lose exactly their managedFields', () => {
    for (const v of [
      pod,
      { type: 'MODIFIED', object: pod },
      { kind: 'PodList', metadata: { resourceVersion: '9' }, items: [pod, pod, { metadata: { name: 'x' } }] },
    ]) {
      const text = JSON.stringify(v);
      expect(withoutManagedFields(text).length).toBeLessThan(text.length);
      expect(parsedWithout(text)).toEqual(dropped(v));
    }
  });

  test('text without managedFields is the same string', () => {
    const text = JSON.stringify({ metadata: { name: 'a' }, data: { x: '"managedFields":[' } });
    expect(withoutManagedFields(text)).toBe(text);
  });

  test('managedFields as the first member, the only member, or empty', () => {
    for (const metadata of [
      { managedFields: [{ manager: 'm' }], name: 'a' },
      { managedFields: [{ manager: 'm' }] },
      { name: 'a', managedFields: [] },
    ]) {
      expect(parsedWithout(JSON.stringify({ metadata }))).toEqual(dropped({ metadata }));
    }
  });

  test('strings that look like the end of the array do not end it', () => {
    const tricky = ['a]},"spec":{', '\\', '\\"', '"]', 'k:{\\"x\\":\\"]\\"}', '],[{', '世界 ]'];
    for (const s of tricky) {
      const v = {
        metadata: { name: s, managedFields: [{ manager: s, fieldsV1: { [`f:${s}`]: { s } } }] },
        s,
      };
      expect(parsedWithout(JSON.stringify(v))).toEqual(dropped(v));
    }
  });

  test('a managedFields member that is not an array stays', () => {
    const v = { metadata: { name: 'a', managedFields: null }, spec: { managedFields: 'x' } };
    const text = JSON.stringify(v);
    expect(withoutManagedFields(text)).toBe(text);
  });

  test('text not in the compact shape, or not well formed, is left as it is', () => {
    const pretty = JSON.stringify(pod, null, 2);
    expect(withoutManagedFields(pretty)).toBe(pretty);
    for (const broken of [
      '{"metadata":{"name":"a","managedFields":[{"manager":"m"}',
      '{"metadata":{"name":"a","managedFields":[{"manager":"m}]}}',
      '{"metadata":{"name":"a","managedFields":[{"manager":"m"}}}',
    ]) {
      expect(withoutManagedFields(broken)).toBe(broken);
    }
  });

  test('any JSON: cutting then parsing equals parsing then deleting', () => {
    const withManaged = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.string({ unit: 'binary' }),
        fc.constantFrom('"managedFields":[', ']},"', '\\', '"', ']', '}'),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        tie('object'),
      ),
      object: fc
        .tuple(
          fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('managedFields', 'metadata')), tie('value'), {
            maxKeys: 4,
          }),
          fc.option(fc.array(tie('value'), { maxLength: 3 }), { nil: undefined }),
          fc.boolean(),
        )
        .map(([o, managed, first]) => {
          if (managed === undefined) return o;
          const { managedFields: _drop, ...rest } = o as Record<string, unknown>;
          return first ? { managedFields: managed, ...rest } : { ...rest, managedFields: managed };
        }),
    }));
    fc.assert(
      fc.property(withManaged.object, (v) => {
        expect(parsedWithout(JSON.stringify(v))).toEqual(dropped(v));
      }),
      { numRuns: 2000 },
    );
  });
});
