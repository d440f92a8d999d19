// The informer cache's oldest-first pages at the controller's scale: its ordered index stays right
// across creates, updates and deletes, and a claim's reconcile over a 5,000-Idle-pod pool reads a
// window of it through that index (no list of the pool, counted, not timed).
import {
  CANDIDATE_WINDOW,
  compareOldestFirst,
  LABEL_POOL,
  LABEL_STATE,
  oldestFirstKey,
  type Pod,
  reconcilePodClaim,
} from '@claimkit/core';
import { ApiModel, ManualClock, Rng } from '@claimkit/core/model';
import {
  FakeTimers,
  forPool,
  idle,
  inPool,
  node,
  onNode,
  pod,
  podClaim,
  podPool,
  put,
  ready,
  withMinIdle,
  withReleaseFinalizer,
  withState,
} from '@claimkit/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IndexedStore, labelSetValues } from './indexed-store.ts';
import { Informer } from './informer.ts';
import { InformerCache } from './informer-cache.ts';

const running: { stop(): void }[] = [];
afterEach(() => {
  for (const r of running.splice(0)) r.stop();
  vi.restoreAllMocks();
});

describe('IndexedStore: an ordered index', () => {
  it('keeps each bucket oldest first across sets, replacements and deletes', () => {
    const store = new IndexedStore<Pod>();
    const index = 'labels:pool,state';
    store.addIndex(index, labelSetValues([LABEL_POOL, LABEL_STATE]), { ordered: true });
    const rng = new Rng(3);
    for (let step = 0; step < 2000; step++) {
      const name = `p${rng.int(60)}`;
      if (rng.chance(0.2)) store.delete({ namespace: 'default', name });
      else {
        const p = pod(
          name,
          inPool(rng.chance(0.5) ? 'a' : 'b'),
          withState(rng.chance(0.7) ? 'Idle' : 'Bound'),
        );
        p.metadata.creationTimestamp = new Date(rng.int(5) * 1000).toISOString();
        store.set(p);
      }
      if (step % 50 !== 0) continue;
      for (const pool of ['a', 'b'])
        for (const state of ['Idle', 'Bound']) {
          const value = `${pool}\n${state}`;
          const want = (store.byIndex(index, value, 'default') ?? []).sort((x, y) =>
            compareOldestFirst(oldestFirstKey(x), oldestFirstKey(y)),
          );
          const got = [...(store.oldestFirst(index, value, 'default') ?? [])].map((e) => e.obj);
          expect(got).toEqual(want);
        }
    }
  });
});

describe('InformerCache: a claim over a pool of 5,000 Idle pods', () => {
  it('binds through the ordered index, never listing the pool', async () => {
    const clock = new ManualClock();
    const m = new ApiModel({ clock });
    await put(m, podPool('warm', withMinIdle(5000)));
    await put(m, node('n1'));
    for (let i = 0; i < 5000; i++) {
      await put(m, pod(`warm-${i}`, inPool('warm'), idle(), ready(), onNode('n1')));
      if (i % 9 === 8) clock.advance(1000);
    }
    const cache = new InformerCache(m, { live: m, timers: new FakeTimers() });
    running.push(cache);
    cache.informerFor('Pod', {
      indexLabels: [LABEL_POOL, LABEL_STATE],
      indexLabelSets: [[LABEL_POOL, LABEL_STATE]],
    });
    cache.informerFor('PodClaim', { indexFields: ['spec.podName', 'spec.sourcePod'] });
    cache.informerFor('PodPool');
    cache.informerFor('Node', { clusterScoped: true });
    await cache.start();
    await put(m, podClaim('c', forPool('warm'), withReleaseFinalizer()));
    await new Promise<void>((r) => setImmediate(r));

    const listed: number[] = [];
    const listMatching = Informer.prototype.listMatching;
    vi.spyOn(Informer.prototype, 'listMatching').mockImplementation(function (this: Informer<'Pod'>, opts) {
      const out = listMatching.call(this, opts);
      listed.push(out.length);
      return out;
    });
    const pages: number[] = [];
    const listOldestFirst = Informer.prototype.listOldestFirst;
    vi.spyOn(Informer.prototype, 'listOldestFirst').mockImplementation(function (
      this: Informer<'Pod'>,
      opts,
    ) {
      const out = listOldestFirst.call(this, opts);
      pages.push(out.items.length);
      return out;
    });
    await reconcilePodClaim(
      { cache, client: m, now: () => clock.now() },
      { namespace: 'default', name: 'c' },
    );
    const bound = m.getNow('PodClaim', { namespace: 'default', name: 'c' }).status?.podName;
    expect(bound).toMatch(/^warm-\d+$/);
    // The oldest CANDIDATE_WINDOW were the choice: the pod is one of them.
    expect(Number(bound!.slice('warm-'.length))).toBeLessThan(CANDIDATE_WINDOW);
    expect(pages).toEqual([CANDIDATE_WINDOW]);
    expect(Math.max(0, ...listed)).toBeLessThanOrEqual(1);
  });
});
