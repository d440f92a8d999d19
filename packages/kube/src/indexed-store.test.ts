// The store's indexes against a model (every stored object filtered by hand) over random sets and
// deletes: values held by one object, promoted to namespace -> name maps by a second object, and
// back to one object when the others leave, across namespaces and values an object holds twice.
import type { KubeObject } from '@claimkit/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IndexedStore, type IndexFunc, labelValues } from './indexed-store.ts';

const NAMESPACES = ['a', 'b'] as const;
const VALUES = ['v1', 'v2', 'v3'] as const;

const obj = (
  namespace: string,
  name: string,
  labels: Record<string, string>,
  refs: string[],
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace, name, labels, annotations: { refs: refs.join(',') } },
});

/** A multi-valued index (like a claim's podName and sourcePod), duplicates included. */
const refValues: IndexFunc<KubeObject> = (o) =>
  (o.metadata.annotations?.refs ?? '').split(',').filter(Boolean);

const op = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    namespace: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom('p', 'q', 'r', 's'),
    label: fc.option(fc.constantFrom(...VALUES), { nil: undefined }),
    refs: fc.array(fc.constantFrom(...VALUES), { maxLength: 3 }),
  }),
  fc.record({
    kind: fc.constant('delete' as const),
    namespace: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom('p', 'q', 'r', 's'),
  }),
);

const names = (objs: Iterable<KubeObject>) =>
  [...objs].map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

describe('IndexedStore indexes', () => {
  it('answer every value and namespace as a filter over the stored objects does, whatever the sets and deletes', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => {
        const store = new IndexedStore<KubeObject>();
        store.addIndex('label', labelValues('x'));
        store.addIndex('refs', refValues);
        const model = new Map<string, KubeObject>();
        for (const o of ops) {
          const key = `${o.namespace}/${o.name}`;
          if (o.kind === 'set') {
            const next = obj(o.namespace, o.name, o.label ? { x: o.label } : {}, o.refs);
            expect(store.set(next)).toBe(model.get(key));
            model.set(key, next);
          } else {
            expect(store.delete({ namespace: o.namespace, name: o.name })).toBe(model.get(key));
            model.delete(key);
          }
          for (const [index, fn] of [
            ['label', labelValues('x')],
            ['refs', refValues],
          ] as const) {
            for (const value of VALUES) {
              for (const namespace of [undefined, ...NAMESPACES]) {
                const want = names(
                  [...model.values()].filter(
                    (m) =>
                      fn(m).includes(value) &&
                      (namespace === undefined || m.metadata.namespace === namespace),
                  ),
                );
                const where = `${index}=${value} in ${namespace ?? 'all'} after ${JSON.stringify(o)}`;
                expect(names(store.byIndex(index, value, namespace)!), where).toEqual(want);
                expect(names(store.iterateIndex(index, value, namespace)!), where).toEqual(want);
                const snap = store.indexSnapshot(index, value, namespace)!;
                expect(names(snap), where).toEqual(want);
                expect(Object.isFrozen(snap)).toBe(true);
                expect(store.count(index, value, namespace), where).toBe(want.length);
              }
            }
          }
        }
        expect(names(store.values())).toEqual(names(model.values()));
      }),
      { numRuns: 300 },
    );
  });

  it("a bucket's frozen array is shared until the bucket changes, with one object in it or several", () => {
    const store = new IndexedStore<KubeObject>();
    store.addIndex('label', labelValues('x'));
    const p = obj('a', 'p', { x: 'v1' }, []);
    store.set(p);
    const one = store.indexSnapshot('label', 'v1', 'a')!;
    expect(one).toEqual([p]);
    expect(store.indexSnapshot('label', 'v1', 'a')).toBe(one);
    expect(store.indexSnapshot('label', 'v1', 'b')).toEqual([]);
    store.set(obj('a', 'q', { x: 'v2' }, []));
    expect(store.indexSnapshot('label', 'v1', 'a')).toBe(one);
    // A second object under the value, then the first one leaving it.
    const q = obj('a', 'q', { x: 'v1' }, []);
    store.set(q);
    const two = store.indexSnapshot('label', 'v1', 'a')!;
    expect(names(two)).toEqual(['a/p', 'a/q']);
    expect(store.indexSnapshot('label', 'v1', 'a')).toBe(two);
    store.delete({ namespace: 'a', name: 'p' });
    const back = store.indexSnapshot('label', 'v1', 'a')!;
    expect(back).toEqual([q]);
    expect(store.indexSnapshot('label', 'v1', 'a')).toBe(back);
    // A new version of the object is a new array.
    store.set(obj('a', 'q', { x: 'v1', y: 'z' }, []));
    expect(store.indexSnapshot('label', 'v1', 'a')).not.toBe(back);
  });
});
