// A claim's gather reads a window of its pool, not the pool: with 5,000 Idle pods the pods it reads
// through the cache stay within the candidate window (counted, not timed), on every Reader the
// controller's core runs over in tests (the model, a CacheView). A Reader without the oldest-first
// capability still works, reading the pool once as before, and picks the same pod.
import { describe, expect, test } from 'vitest';
import type { ObjectKey } from '../api/meta.ts';
import type { OldestFirstOptions, OldestFirstPage } from '../api/oldest-first.ts';
import type { ListOptions, ObjectList, Reader } from '../api/ports.ts';
import type { Kind, KindMap, Pod } from '../api/types.ts';
import { CacheView } from '../model/cache-view.ts';
import { bindCandidates, CANDIDATE_WINDOW, pickCandidate } from '../pool/bind-candidates.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import {
  cordoned,
  forPool,
  idle,
  inPool,
  node,
  onNode,
  pod,
  podClaim,
  podPool,
  ready,
  withMinIdle,
  withReleaseFinalizer,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { gatherPodClaim, reconcilePodClaim } from './podclaim/index.ts';

const POOL_SIZE = 5000;

/** Counts the pods a Reader hands out; `ordered: false` hides the oldest-first capability. */
function counting(inner: Reader & { listOldestFirst?: unknown }, ordered = true) {
  const c = { pods: 0 };
  const count = (kind: Kind, n: number) => {
    if (kind === 'Pod') c.pods += n;
  };
  const reader: Reader & {
    listOldestFirst?: <K extends Kind>(k: K, o: OldestFirstOptions) => Promise<OldestFirstPage<KindMap[K]>>;
  } = {
    async get<K extends Kind>(kind: K, key: ObjectKey) {
      const o = await inner.get(kind, key);
      count(kind, 1);
      return o;
    },
    async list<K extends Kind>(kind: K, opts?: ListOptions): Promise<ObjectList<KindMap[K]>> {
      const l = await inner.list(kind, opts);
      count(kind, l.items.length);
      return l;
    },
  };
  if (ordered) {
    const o = inner as Reader & {
      listOldestFirst: <K extends Kind>(k: K, o: OldestFirstOptions) => Promise<OldestFirstPage<KindMap[K]>>;
    };
    reader.listOldestFirst = async (kind, opts) => {
      const page = await o.listOldestFirst(kind, opts);
      count(kind, page.items.length);
      return page;
    };
  }
  return { reader, c };
}

async function bigPool() {
  const w = world({ schema: false });
  await put(w.model, podPool('warm', withMinIdle(POOL_SIZE)));
  await put(w.model, node('n1'));
  await put(w.model, node('bad', cordoned()));
  for (let i = 0; i < POOL_SIZE; i++) {
    // A few pods per second, as a pool warmed in bulk; the oldest 40 sit on a cordoned node.
    await put(w.model, pod(`warm-${i}`, inPool('warm'), idle(), ready(), onNode(i < 40 ? 'bad' : 'n1')));
    if (i % 7 === 6) w.clock.advance(1000);
  }
  const claim = await put(w.model, podClaim('c', forPool('warm'), withReleaseFinalizer()));
  return { w, claim };
}

describe('a claim gather with 5,000 Idle pods in its pool', () => {
  test.each([
    ['the model', false],
    ['a CacheView', true],
  ])(
    'reads at most a window of them through %s, and binds the pod a full read would pick',
    async (_, view) => {
      const { w, claim } = await bigPool();
      const cache = view ? new CacheView(w.model) : w.model;
      const { reader, c } = counting(cache);
      const snap = await gatherPodClaim({ ...w.deps, cache: reader }, w.key('c'));
      // The 40 stranded ones are looked at and skipped; the window's 128 are kept.
      expect(c.pods).toBeLessThanOrEqual(CANDIDATE_WINDOW + 40 + CANDIDATE_WINDOW);
      expect(snap?.pods.length).toBe(CANDIDATE_WINDOW);
      expect([...(snap?.unservable ?? [])]).toEqual(['bad']);

      const all = w.model.listNow('Pod', {});
      const expected = pickCandidate(
        bindCandidates('warm', all, new ClaimIndex([]), new Set(['bad'])),
        claim,
      );
      c.pods = 0;
      await reconcilePodClaim({ ...w.deps, cache: reader }, w.key('c'));
      expect(c.pods).toBeLessThanOrEqual(2 * CANDIDATE_WINDOW + 40 + 10);
      expect(w.get('PodClaim', 'c').status?.podName).toBe(expected?.metadata.name);
    },
  );

  test('a Reader without the capability reads the pool once and picks the same pods', async () => {
    const { w } = await bigPool();
    const ordered = counting(w.model);
    const plain = counting(w.model, false);
    const a = await gatherPodClaim({ ...w.deps, cache: ordered.reader }, w.key('c'));
    const b = await gatherPodClaim({ ...w.deps, cache: plain.reader }, w.key('c'));
    const names = (ps: Pod[] | undefined) => ps?.map((p) => p.metadata.name);
    expect(names(b?.pods)).toEqual(names(a?.pods));
    expect(b?.unservable).toEqual(a?.unservable);
    expect(plain.c.pods).toBeGreaterThanOrEqual(POOL_SIZE);
  });
});
