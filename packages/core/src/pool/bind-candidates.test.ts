import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors.ts';
import { matchesList } from '../api/list-match.ts';
import { keyString, type ObjectKey } from '../api/meta.ts';
import { oldestFirstPage } from '../api/oldest-first.ts';
import type { ListOptions, Reader } from '../api/ports.ts';
import type { Kind, KindMap, Node, Pod } from '../api/types.ts';
import { Rng } from '../model/clock.ts';
import {
  at,
  boundTo,
  claimedBy,
  cordoned,
  createdAt,
  deleting,
  idle,
  inNamespace,
  inPool,
  node,
  nodeNotReady,
  onNode,
  pod,
  podClaim,
  ready,
  withState,
} from '../testing/fixtures.ts';
import {
  bindCandidates,
  CANDIDATE_WINDOW,
  idlePodsSelector,
  oldestBindCandidates,
  readOldestBindCandidates,
} from './bind-candidates.ts';
import { ClaimIndex } from './claim-index.ts';
import { readUnservableNodes } from './serving.ts';

const names = (ps: Pod[]) => ps.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);

describe('oldestBindCandidates', () => {
  it('is the first `limit` of bindCandidates, ties in time and name included, for random pools', () => {
    const rng = new Rng(12);
    for (let round = 0; round < 60; round++) {
      const n = rng.int(400);
      const pods: Pod[] = [];
      for (let i = 0; i < n; i++) {
        const mods = [
          inNamespace(rng.chance(0.8) ? 'a' : 'b'),
          inPool(rng.chance(0.9) ? 'warm' : 'other'),
          createdAt(rng.int(20)), // many pods per second, as a pool warmed in bulk has
          rng.chance(0.9) ? idle() : withState('Bound'),
          ...(rng.chance(0.9) ? [ready()] : []),
          ...(rng.chance(0.05) ? [deleting()] : []),
        ];
        // Names repeat across namespaces, so (time, name) ties fall back to input order.
        pods.push(pod(`p${rng.int(n + 1)}`, ...mods));
      }
      const claims = pods
        .filter(() => rng.chance(0.05))
        .map((p, i) => podClaim(`c${i}`, inNamespace(p.metadata.namespace!), boundTo(p.metadata.name, 'n1')));
      const index = new ClaimIndex(claims);
      const all = bindCandidates('warm', pods, index);
      for (const limit of [0, 1, 7, CANDIDATE_WINDOW, n + 1]) {
        expect(
          names(oldestBindCandidates('warm', pods, index, limit)),
          `round ${round} limit ${limit}`,
        ).toEqual(names(all.slice(0, limit)));
      }
    }
  });

  it('keeps the oldest when the input comes newest first', () => {
    const pods = Array.from({ length: 300 }, (_, i) =>
      pod(`p${i}`, inPool('warm'), idle(), ready(), createdAt(300 - i)),
    );
    expect(names(oldestBindCandidates('warm', pods, new ClaimIndex([]), 3))).toEqual([
      'default/p299',
      'default/p298',
      'default/p297',
    ]);
  });
});

/** A Reader over fixed objects, stored as given; `ordered` adds the oldest-first capability. */
function arrayReader(objects: (Pod | Node)[], ordered: boolean): Reader {
  const byKind = (kind: Kind) => objects.filter((o) => o.kind === kind);
  const reader: Reader = {
    async get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]> {
      const o = byKind(kind).find(
        (x) => keyString({ namespace: x.metadata.namespace ?? '', name: x.metadata.name }) === keyString(key),
      );
      if (!o) throw new ApiError('NotFound', `${key.name} not found`);
      return o as unknown as KindMap[K];
    },
    async list<K extends Kind>(kind: K, opts: ListOptions = {}) {
      return {
        items: byKind(kind).filter((o) => matchesList(o, opts)) as unknown as KindMap[K][],
        resourceVersion: '1',
      };
    },
  };
  if (!ordered) return reader;
  return Object.assign(reader, {
    async listOldestFirst<K extends Kind>(
      kind: K,
      opts: {
        namespace?: string;
        labelSelector?: ListOptions['labelSelector'];
        limit: number;
        after?: never;
      },
    ) {
      const { items } = await reader.list(kind, opts);
      return oldestFirstPage(items as unknown as Pod[], opts);
    },
  });
}

describe('readOldestBindCandidates', () => {
  it('picks exactly what oldestBindCandidates picks over every Idle pod with every node read (property)', async () => {
    const podArb = fc.record({
      // Few names, mixed case and digits: (time, name) ties and code-unit order are exercised.
      name: fc.stringMatching(/^[a-cA-C0-9]{1,3}$/),
      ns: fc.constantFrom('a', 'b'),
      pool: fc.constantFrom('warm', 'cold'),
      second: fc.integer({ min: 0, max: 6 }),
      fraction: fc.constantFrom('', '.000', '.250'),
      state: fc.constantFrom('Idle', 'Idle', 'Idle', 'Bound'),
      ready: fc.boolean(),
      deleting: fc.boolean(),
      labelled: fc.boolean(),
      node: fc.option(fc.constantFrom('n0', 'n1', 'n2', 'n3', 'n4'), { nil: undefined }),
    });
    const nodeArb = fc.constantFrom('ok', 'notReady', 'cordoned', 'missing');
    await fc.assert(
      fc.asyncProperty(
        fc.array(podArb, { maxLength: 80 }),
        fc.array(nodeArb, { minLength: 5, maxLength: 5 }),
        fc.integer({ min: 0, max: 20 }),
        fc.boolean(),
        async (specs, nodeStates, limit, ordered) => {
          const seen = new Set<string>();
          const objects: (Pod | Node)[] = [];
          for (const x of specs) {
            if (seen.has(`${x.ns}/${x.name}`)) continue; // names are unique in a namespace
            seen.add(`${x.ns}/${x.name}`);
            const p = pod(
              x.name,
              inNamespace(x.ns),
              inPool(x.pool),
              x.state === 'Idle' ? idle() : withState('Bound'),
              ...(x.labelled ? [claimedBy('c')] : []),
              ...(x.ready ? [ready()] : []),
              ...(x.deleting ? [deleting()] : []),
              ...(x.node ? [onNode(x.node)] : []),
            );
            p.metadata.creationTimestamp = at(x.second).replace(/Z$/, `${x.fraction}Z`);
            objects.push(p);
          }
          nodeStates.forEach((state, i) => {
            if (state === 'missing') return;
            const mods = state === 'notReady' ? [nodeNotReady()] : state === 'cordoned' ? [cordoned()] : [];
            objects.push(node(`n${i}`, ...mods));
          });
          const reader = arrayReader(objects, ordered);
          for (const ns of ['a', 'b']) {
            const idleList = (
              await reader.list('Pod', { namespace: ns, labelSelector: idlePodsSelector('warm') })
            ).items;
            const before = oldestBindCandidates(
              'warm',
              idleList,
              new ClaimIndex([]),
              limit,
              await readUnservableNodes(
                reader,
                idleList.flatMap((p) => (p.spec.nodeName ? [p.spec.nodeName] : [])),
              ),
            );
            const after = await readOldestBindCandidates(reader, ns, 'warm', limit);
            expect(names(after)).toEqual(names(before));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads pages until the window is full when the oldest pods are not candidates', async () => {
    const pods = Array.from({ length: 30 }, (_, i) =>
      pod(
        `p${String(i).padStart(2, '0')}`,
        inPool('warm'),
        idle(),
        createdAt(i),
        ...(i < 20 ? [] : [ready()]),
      ),
    );
    let pages = 0;
    const inner = arrayReader(pods, true) as Reader & { listOldestFirst: (...a: never[]) => unknown };
    const counting = Object.assign(Object.create(inner), {
      listOldestFirst: (...a: never[]) => {
        pages++;
        return inner.listOldestFirst(...a);
      },
    }) as Reader;
    const got = await readOldestBindCandidates(counting, 'default', 'warm', 4);
    expect(names(got)).toEqual(['default/p20', 'default/p21', 'default/p22', 'default/p23']);
    expect(pages).toBe(6);
  });
});
