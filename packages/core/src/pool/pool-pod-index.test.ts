// The pool pod index (pool-pod-index.ts): what it holds as pods change, and the one property that
// makes it safe: a pool's decision from the index's summary (quiet Idle pods counted, not listed) is
// the decision from the pool's full list, for any pool, pods, claims and nodes; where the summary
// cannot choose, the decision asks for the full read and then decides the same.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { Decision } from '../api/decision.ts';
import type { Node, Pod, PodClaim } from '../api/types.ts';
import { ApiModel } from '../model/api-model.ts';
import { decidePodPool, gatherPodPool, type PodPoolDeps } from '../reconcile/podpool/index.ts';
import {
  boundTo,
  claimedBy,
  cordoned,
  deleting,
  failed,
  idle,
  inPool,
  node,
  notReady,
  ofTemplate,
  onNode,
  pod,
  podClaim,
  podPool,
  podTemplate,
  ready,
  T0_MS,
  unschedulable,
  withFinalizers,
  withMaxPods,
  withMinIdle,
  withoutTemplateHash,
  withSpec,
  withState,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { isQuietIdle, PoolPodIndex } from './pool-pod-index.ts';
import { podTemplateHash } from './template-hash.ts';

const NS = 'default';

describe('PoolPodIndex', () => {
  test('a pod moves between quiet and the others as it changes; counts by hash and node follow', () => {
    const index = new PoolPodIndex();
    const a = pod('a', inPool('web'), idle(), ready(), onNode('n1'));
    const hash = podTemplateHash(a)!;
    index.upsert(a);
    index.upsert(pod('b', inPool('web'), idle(), ready(), onNode('n2')));
    let v = index.view(NS, 'web');
    expect(v.quietCount).toBe(2);
    expect(v.quietWithHash(hash)).toBe(2);
    expect([...v.quietNodes()].sort()).toEqual(['n1', 'n2']);
    expect(v.others()).toEqual([]);
    // Bound: no longer quiet; its node has no quiet pod left.
    index.upsert(pod('a', inPool('web'), claimedBy('c1'), ready(), onNode('n1')));
    v = index.view(NS, 'web');
    expect(v.quietCount).toBe(1);
    expect([...v.quietNodes()]).toEqual(['n2']);
    expect(v.others().map((p) => p.metadata.name)).toEqual(['a']);
    expect(v.quietNamed('a')).toBeUndefined();
    expect(v.quietNamed('b')?.metadata.name).toBe('b');
    // Its pool label gone: the pod leaves the pool.
    index.upsert(pod('b', idle(), ready()));
    expect(index.view(NS, 'web').quietCount).toBe(0);
    index.remove(pod('a'));
    expect(index.view(NS, 'web').others()).toEqual([]);
    // A relist replaces everything.
    index.replace([pod('x', inPool('web'), idle(), ready(), onNode('n1'))]);
    expect(
      index
        .view(NS, 'web')
        .quietAll()
        .map((p) => p.metadata.name),
    ).toEqual(['x']);
  });

  test('quiet: Idle, unclaimed, not deleting, not finished, not unschedulable', () => {
    const base = [inPool('web'), idle(), onNode('n1')] as const;
    expect(isQuietIdle(pod('p', ...base, ready()))).toBe(true);
    expect(isQuietIdle(pod('p', ...base, notReady()))).toBe(true);
    expect(isQuietIdle(pod('p', ...base, failed()))).toBe(false);
    expect(isQuietIdle(pod('p', ...base, unschedulable()))).toBe(false);
    expect(isQuietIdle(pod('p', ...base, deleting()))).toBe(false);
    expect(isQuietIdle(pod('p', inPool('web'), claimedBy('c'), onNode('n1')))).toBe(false);
    expect(isQuietIdle(pod('p', inPool('web'), withState('Draining')))).toBe(false);
  });
});

// ---- the equivalence property ----

const POD_STATES = [
  'quiet',
  'quiet',
  'quiet',
  'notReady',
  'bound',
  'draining',
  'orphan',
  'finished',
  'unschedulable',
] as const;

interface PodSpec {
  /** bound and draining pods have their claim; an orphan names a claim that is gone (residue). */
  state: (typeof POD_STATES)[number];
  template: 'current' | 'outdated' | 'none';
  node: 'n1' | 'n2' | 'n3';
  deleting: boolean;
}

interface ClaimSpec {
  /** The pod it references (a pod the cache still shows Idle: taken), or none (waiting: demand). */
  pod: number;
  field: 'podName' | 'sourcePod' | 'none';
  deleting: boolean;
}

const podArb: fc.Arbitrary<PodSpec> = fc.record({
  state: fc.constantFrom(...POD_STATES),
  template: fc.constantFrom('current', 'current', 'current', 'current', 'outdated', 'none'),
  node: fc.constantFrom('n1', 'n1', 'n2', 'n3'),
  deleting: fc.constantFrom(false, false, false, false, true),
});

const claimArb: fc.Arbitrary<ClaimSpec> = fc.record({
  pod: fc.integer({ min: 0, max: 15 }),
  field: fc.constantFrom('podName', 'podName', 'sourcePod', 'none'),
  deleting: fc.constantFrom(false, false, true),
});

/** A pool pod; a bound or draining one labelled for `claim`, which references it. */
function podOf(i: number, s: PodSpec, claim?: PodClaim): Pod {
  const mods = [inPool('web'), onNode(s.node)];
  if (s.template === 'outdated') mods.push(ofTemplate(podTemplate({ app: 'old' })));
  if (s.template === 'none') mods.push(withoutTemplateHash);
  if (s.state === 'orphan') mods.push(claimedBy('gone'), ready());
  else if (claim) mods.push(claimedBy(claim), ready());
  else mods.push(idle());
  if (s.state === 'draining') mods.push(withState('Draining'));
  if (s.state === 'quiet') mods.push(ready());
  if (s.state === 'notReady') mods.push(notReady());
  if (s.state === 'finished') mods.push(failed());
  if (s.state === 'unschedulable') mods.push(unschedulable());
  if (s.deleting) mods.push(withFinalizers('test/keep'));
  return pod(`p${i}`, ...mods);
}

/** The decision as the step makes it from the cache: a `needsFullRead` is answered by a full gather. */
async function decideFromCache(
  deps: PodPoolDeps,
): Promise<{ d: Decision; counted: number; fullRead: boolean }> {
  const key = { namespace: NS, name: 'web' };
  const s = await gatherPodPool(deps, key, { live: false });
  const d = decidePodPool(s!);
  const counted = s!.quietIdle?.count ?? 0;
  if (!d.needsFullRead) return { d, counted, fullRead: false };
  const full = await gatherPodPool(deps, key, { live: false, full: true });
  expect(full!.quietIdle).toBeUndefined();
  return { d: decidePodPool(full!), counted, fullRead: true };
}

describe('a decision from the index summary is the decision from the full list', () => {
  test('for any pool, pods, claims and nodes', async () => {
    const seen = { summarized: 0, fullRead: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(podArb, { maxLength: 16 }),
        fc.array(claimArb, { maxLength: 6 }),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 20 }),
        fc.constantFrom('ok', 'cordoned', 'missing'),
        async (pods, claims, minIdle, maxPods, n2) => {
          const model = new ApiModel();
          await put(model, podPool('web', withMinIdle(minIdle), withMaxPods(maxPods)));
          await put<Node>(model, node('n1'));
          if (n2 !== 'missing')
            await put<Node>(model, node('n2', ...(n2 === 'cordoned' ? [cordoned()] : [])));
          await put<Node>(model, node('n3', cordoned()));
          for (const [i, s] of pods.entries()) {
            const held = s.state === 'bound' || s.state === 'draining';
            const claim = held ? await put(model, podClaim(`b${i}`, boundTo(`p${i}`))) : undefined;
            await put(model, podOf(i, s, claim));
            if (s.deleting) await model.delete('Pod', { namespace: NS, name: `p${i}` });
          }
          for (const [i, c] of claims.entries()) {
            const target = `p${c.pod}`;
            const mods =
              c.field === 'podName'
                ? [boundTo(target)]
                : c.field === 'sourcePod'
                  ? [withSpec<PodClaim>({ sourcePod: target })]
                  : [];
            await put(
              model,
              podClaim(`c${i}`, ...mods, ...(c.deleting ? [withFinalizers('test/keep')] : [])),
            );
            if (c.deleting) await model.delete('PodClaim', { namespace: NS, name: `c${i}` });
          }
          const index = new PoolPodIndex();
          index.replace(model.listNow('Pod'));
          const plain: PodPoolDeps = { cache: model, client: model, now: () => T0_MS };
          const want = await decideFromCache(plain);
          const got = await decideFromCache({ ...plain, poolPods: index });
          expect(got.d).toEqual(want.d);
          if (got.fullRead) seen.fullRead++;
          else if (got.counted > 0 && !got.d.needsLiveRead) seen.summarized++;
        },
      ),
      { numRuns: 600, seed: 22 },
    );
    // Both ways were taken: decisions from the summary, and summaries that asked for the full read.
    expect(seen.summarized).toBeGreaterThan(40);
    expect(seen.fullRead).toBeGreaterThan(15);
  });
});
