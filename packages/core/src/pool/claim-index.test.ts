import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { PodClaim } from '../api/types.ts';
import { boundTo, deleting, forPool, inNamespace, migratingFrom, podClaim } from '../testing/fixtures.ts';
import { ClaimIndex } from './claim-index.ts';

const NS = 'default';
const names = (refs: { claim: { metadata: { name: string } }; field: string }[]) =>
  refs.map((r) => `${r.claim.metadata.name}.${r.field}`);

describe('ClaimIndex: one rule for deleting claims', () => {
  test('a deleting claim still references its pods (events) but holds none against a live claim', () => {
    const leaving = podClaim('leaving', boundTo('p-target'), migratingFrom('p-source'), deleting());
    const taker = podClaim('taker', boundTo('p-source'));
    const index = new ClaimIndex([leaving, taker]);
    // Routing view: both claims get p-source's events, the deleting one to finish its finalizer.
    expect(names(index.referencingIncludingDeleting(NS, 'p-source'))).toEqual([
      'leaving.sourcePod',
      'taker.podName',
    ]);
    expect(names(index.referencingIncludingDeleting(NS, 'p-target'))).toEqual(['leaving.podName']);
    // Holding view: the deleting claim holds nothing.
    expect(names(index.referencing(NS, 'p-source'))).toEqual(['taker.podName']);
    expect(index.referencing(NS, 'p-target')).toEqual([]);
    expect(index.isReferenced(NS, 'p-target')).toBe(false);
    expect(index.otherReference(NS, 'p-source', taker)).toBeUndefined();
    expect(index.otherReference(NS, 'p-source', leaving)?.claim.metadata.name).toBe('taker');
  });

  test('every claim of a pool, bound, waiting and deleting, in its namespace only (a pool moving shards)', () => {
    const index = new ClaimIndex([
      podClaim('bound', boundTo('p1')),
      podClaim('waiting'),
      podClaim('going', boundTo('p2'), deleting()),
      podClaim('cold', forPool('cold')),
      podClaim('elsewhere', inNamespace('other')),
    ]);
    expect(index.ofPool(NS, 'web').sort()).toEqual(['bound', 'going', 'waiting']);
    expect(index.ofPool('other', 'web')).toEqual(['elsewhere']);
    index.remove(podClaim('bound'));
    expect(index.ofPool(NS, 'web').sort()).toEqual(['going', 'waiting']);
  });

  test('updates replace a claim’s references; removal and relists forget them', () => {
    const index = new ClaimIndex();
    index.upsert(podClaim('a', boundTo('p1'), migratingFrom('p0')));
    index.upsert(podClaim('b', boundTo('p2')));
    expect(index.size).toBe(2);
    expect(index.isReferenced(NS, 'p0')).toBe(true);
    // The migration finished: a moves off p0 and onto p3.
    index.upsert(podClaim('a', boundTo('p3')));
    expect(index.isReferenced(NS, 'p0')).toBe(false);
    expect(index.isReferenced(NS, 'p1')).toBe(false);
    expect(names(index.referencing(NS, 'p3'))).toEqual(['a.podName']);
    index.remove(podClaim('a'));
    expect(index.referencingIncludingDeleting(NS, 'p3')).toEqual([]);
    expect(index.size).toBe(1);
    index.replace([podClaim('c', boundTo('p2'))]);
    expect(names(index.referencing(NS, 'p2'))).toEqual(['c.podName']);
    expect(index.size).toBe(1);
  });

  test('namespaces are separate, and a claim naming one pod twice is listed per field', () => {
    const index = new ClaimIndex([
      podClaim('a', boundTo('p1')),
      podClaim('a', inNamespace('other'), boundTo('p1')),
      podClaim('broken', inNamespace('x'), boundTo('p9'), migratingFrom('p9')),
    ]);
    expect(index.size).toBe(3);
    expect(index.referencing(NS, 'p1').map((r) => r.claim.metadata.namespace)).toEqual([NS]);
    expect(index.referencing('other', 'p1').map((r) => r.claim.metadata.namespace)).toEqual(['other']);
    expect(names(index.referencing('x', 'p9'))).toEqual(['broken.podName', 'broken.sourcePod']);
    index.remove(podClaim('broken', inNamespace('x')));
    expect(index.referencing('x', 'p9')).toEqual([]);
  });
});

describe('ClaimIndex against a model', () => {
  test('every pod answers as a filter over the indexed claims does (claims in the order last indexed, podName before sourcePod), whatever the upserts and removals', () => {
    const NAMESPACES = [NS, 'other'];
    const PODS = ['p0', 'p1', 'p2'];
    const op = fc.record({
      remove: fc.boolean(),
      namespace: fc.constantFrom(...NAMESPACES),
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      podName: fc.option(fc.constantFrom(...PODS), { nil: undefined }),
      sourcePod: fc.option(fc.constantFrom(...PODS), { nil: undefined }),
      deleting: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 30 }), (ops) => {
        const index = new ClaimIndex();
        // The model: claims by key, in the order they were last indexed.
        const model = new Map<string, PodClaim>();
        for (const o of ops) {
          const key = `${o.namespace}/${o.name}`;
          model.delete(key);
          if (o.remove) {
            index.remove(podClaim(o.name, inNamespace(o.namespace)));
          } else {
            const c = podClaim(
              o.name,
              inNamespace(o.namespace),
              ...(o.podName ? [boundTo(o.podName)] : []),
              ...(o.sourcePod ? [migratingFrom(o.sourcePod)] : []),
              ...(o.deleting ? [deleting()] : []),
            );
            index.upsert(c);
            model.set(key, c);
          }
          expect(index.size).toBe(model.size);
          for (const ns of NAMESPACES)
            for (const pod of PODS) {
              const want: string[] = [];
              for (const c of model.values()) {
                if ((c.metadata.namespace ?? '') !== ns) continue;
                if (c.status?.podName === pod) want.push(`${c.metadata.name}.podName`);
                if (c.status?.sourcePod === pod) want.push(`${c.metadata.name}.sourcePod`);
              }
              const where = `${ns}/${pod} after ${JSON.stringify(o)}`;
              expect(names(index.referencingIncludingDeleting(ns, pod)), where).toEqual(want);
              const holding = [...model.values()].filter(
                (c) =>
                  (c.metadata.namespace ?? '') === ns &&
                  !c.metadata.deletionTimestamp &&
                  (c.status?.podName === pod || c.status?.sourcePod === pod),
              );
              expect(index.isReferenced(ns, pod), where).toBe(holding.length > 0);
            }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('ClaimIndex: the claims waiting on a pool', () => {
  test('a claim waits from creation until it is bound or deleted; a pool change moves it', () => {
    const idx = new ClaimIndex([
      podClaim('a', forPool('web')),
      podClaim('b', forPool('web')),
      podClaim('c', forPool('db')),
      podClaim('d', forPool('web'), boundTo('p1')),
      podClaim('e', forPool('web'), deleting()),
      podClaim('f', forPool('web'), inNamespace('other')),
    ]);
    expect(idx.waitingFor('default', 'web')).toEqual(['a', 'b']);
    expect(idx.waitingFor('default', 'db')).toEqual(['c']);
    expect(idx.waitingFor('other', 'web')).toEqual(['f']);
    idx.upsert(podClaim('a', forPool('web'), boundTo('p2')));
    idx.upsert(podClaim('b', forPool('db')));
    expect(idx.waitingFor('default', 'web')).toEqual([]);
    // Oldest first: b was seen (created) before c.
    expect(idx.waitingFor('default', 'db')).toEqual(['b', 'c']);
    idx.remove(podClaim('c'));
    idx.upsert(podClaim('b', forPool('db'), deleting()));
    expect(idx.waitingFor('default', 'db')).toEqual([]);
    idx.replace([podClaim('g', forPool('web'))]);
    expect(idx.waitingFor('default', 'web')).toEqual(['g']);
    expect(idx.waitingFor('other', 'web')).toEqual([]);
  });
});
