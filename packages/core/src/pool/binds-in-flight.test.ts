// The process's binds in flight: a hold steers other claims of this process away from a pod whose
// bind is being written, until the cache shows the pod changed (or the hold expires); it never stands
// in for the pod's CAS. Unit rules first, then two binds of one process through the in-memory API
// model (which returns real 409s): with holds the second claim takes another pod, without them it
// loses a race.
import { describe, expect, test } from 'vitest';
import type { Pod, PodClaim } from '../api/types.ts';
import { reconcilePodClaim } from '../reconcile/podclaim/index.ts';
import {
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
import { gatedClient } from '../testing/gated-client.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { bindCandidates, pickCandidate } from './bind-candidates.ts';
import { BIND_HOLD_TTL_MS, BindsInFlight, holderOf, unheldCandidates } from './binds-in-flight.ts';
import { ClaimIndex } from './claim-index.ts';

const at = (name: string, rv: string): Pod => ({
  ...pod(name),
  metadata: { ...pod(name).metadata, resourceVersion: rv },
});

describe('BindsInFlight', () => {
  test('a hold keeps other claims off the pod as the hold saw it, not the holder', () => {
    const b = new BindsInFlight();
    b.hold(at('p', '5'), 'claim-a', 0);
    expect(b.heldByOther(at('p', '5'), 'claim-b', 10)).toBe(true);
    expect(b.heldByOther(at('p', '5'), 'claim-a', 10)).toBe(false);
    expect(b.heldByOther(at('q', '5'), 'claim-b', 10)).toBe(false);
  });

  test('a newer version of the pod ends the hold (the bind, or anyone else, wrote it)', () => {
    const b = new BindsInFlight();
    b.hold(at('p', '5'), 'claim-a', 0);
    expect(b.heldByOther(at('p', '6'), 'claim-b', 10)).toBe(false);
    expect(b.size()).toBe(0);
    expect(b.heldByOther(at('p', '5'), 'claim-b', 10)).toBe(false);
  });

  test('a hold expires after the TTL, and expired holds are dropped when the next is taken', () => {
    const b = new BindsInFlight();
    b.hold(at('p', '5'), 'claim-a', 0);
    b.hold(at('q', '5'), 'claim-a', 1000);
    expect(b.heldByOther(at('p', '5'), 'claim-b', BIND_HOLD_TTL_MS - 1)).toBe(true);
    expect(b.heldByOther(at('p', '5'), 'claim-b', BIND_HOLD_TTL_MS)).toBe(false);
    b.hold(at('r', '5'), 'claim-a', BIND_HOLD_TTL_MS + 1000);
    // q (taken at 1000) expired at TTL+1000 and was swept; r stays.
    expect(b.size()).toBe(1);
    expect(b.heldByOther(at('r', '5'), 'claim-b', BIND_HOLD_TTL_MS + 1001)).toBe(true);
  });

  test('a failed bind releases only its own hold', () => {
    const b = new BindsInFlight();
    b.hold(at('p', '5'), 'claim-a', 0);
    b.release(at('p', '5'), 'claim-b');
    expect(b.heldByOther(at('p', '5'), 'claim-b', 1)).toBe(true);
    b.release(at('p', '5'), 'claim-a');
    expect(b.size()).toBe(0);
  });

  test('a hold taken again moves to the back of the expiry order', () => {
    const b = new BindsInFlight(100);
    b.hold(at('p', '5'), 'claim-a', 0);
    b.hold(at('q', '5'), 'claim-a', 50);
    b.hold(at('p', '5'), 'claim-c', 60);
    b.hold(at('r', '5'), 'claim-a', 155); // q expired at 150: swept; p (until 160) kept
    expect(b.size()).toBe(2);
    expect(b.heldByOther(at('p', '5'), 'claim-a', 156)).toBe(true);
  });

  test('candidates: held ones are left out, unless every one is held', () => {
    const b = new BindsInFlight();
    const [p, q] = [at('p', '1'), at('q', '1')];
    b.hold(p, 'claim-a', 0);
    expect(unheldCandidates([p, q], b, 'claim-b', 1).map((x) => x.metadata.name)).toEqual(['q']);
    b.hold(q, 'claim-c', 0);
    expect(unheldCandidates([p, q], b, 'claim-b', 1).map((x) => x.metadata.name)).toEqual(['p', 'q']);
    expect(unheldCandidates([p, q], undefined, 'claim-b', 1)).toHaveLength(2);
  });
});

/** Two claims whose hash picks the same one of the pool's two Idle pods. */
async function twoClaimsOnePick() {
  // Read through a cache view, in step with the model until a test holds it back.
  const w = world({ lag: 0 });
  await put(w.model, podPool('warm', withMinIdle(2)));
  await put(w.model, node('n1'));
  const pods = [
    await put(w.model, pod('warm-0', inPool('warm'), idle(), ready(), onNode('n1'))),
    await put(w.model, pod('warm-1', inPool('warm'), idle(), ready(), onNode('n1'))),
  ];
  const claims: PodClaim[] = [];
  for (let i = 0; i < 3; i++)
    claims.push(await put(w.model, podClaim(`c${i}`, forPool('warm'), withReleaseFinalizer())));
  const pick = (c: PodClaim) =>
    pickCandidate(bindCandidates('warm', pods, new ClaimIndex([])), c)?.metadata.name;
  // Three claims, two pods: two of them pick the same one (pigeonhole).
  for (let i = 0; i < 3; i++)
    for (let j = i + 1; j < 3; j++)
      if (pick(claims[i]!) === pick(claims[j]!)) return { w, a: claims[i]!, b: claims[j]! };
  throw new Error('no two claims pick the same pod');
}

describe('two binds of one process, the first still writing its pod', () => {
  test.each([
    [true, 0],
    [false, 1],
  ])('with holds %s: the second claim loses %i races', async (withHolds, lost) => {
    const { w, a, b } = await twoClaimsOnePick();
    const { client, state } = gatedClient(w.model);
    const binds = withHolds ? { bindsInFlight: new BindsInFlight() } : {};
    const deps = { ...w.deps, client, ...binds };
    let open!: () => void;
    state.gate = new Promise<void>((r) => {
      open = r;
    });
    const waiting = new Promise<void>((r) => {
      state.atGate = r;
    });
    const first = reconcilePodClaim(deps, w.key(a.metadata.name));
    await waiting; // a's gather and decide ran; its pod patch waits at the gate
    state.gate = undefined;
    await reconcilePodClaim(deps, w.key(b.metadata.name));
    open();
    await first;
    expect(state.conflicts).toBe(lost);
    // The loser binds on its next turn (the step requeues a conflict at once).
    for (const c of [a, b])
      if (!w.get('PodClaim', c.metadata.name).status?.podName)
        await reconcilePodClaim(deps, w.key(c.metadata.name));
    const bound = [a, b].map((c) => w.get('PodClaim', c.metadata.name).status?.podName);
    expect(new Set(bound).size).toBe(2);
    expect(w.tracker.violations).toEqual([]);
  });
});

describe('a bind landed, the cache still shows the pod Idle', () => {
  test.each([
    [true, 0],
    [false, 1],
  ])('with holds %s: the next claim loses %i races', async (withHolds, lost) => {
    const { w, a, b } = await twoClaimsOnePick();
    const { client, state } = gatedClient(w.model);
    const binds = withHolds ? { bindsInFlight: new BindsInFlight() } : {};
    w.cache.sync();
    w.cache.lag = 1_000_000; // from here on the cache takes in nothing
    const deps = { ...w.deps, client, ...binds };
    await reconcilePodClaim(deps, w.key(a.metadata.name));
    // a's pod is bound on the server; the cache has not seen it.
    const held = w.get('PodClaim', a.metadata.name).status!.podName!;
    expect(w.cache.current('Pod', w.key(held))?.metadata.labels?.['claimkit.dev/state']).toBe('Idle');
    await reconcilePodClaim(deps, w.key(b.metadata.name));
    expect(state.conflicts).toBe(lost);
    if (withHolds) expect(w.get('PodClaim', b.metadata.name).status?.podName).not.toBe(held);
    expect(w.tracker.violations).toEqual([]);
  });

  test('holderOf names a claim by UID (a claim re-created under its name is another holder), else by key', () => {
    const c = podClaim('x', forPool('warm'));
    expect(holderOf(c)).toBe(c.metadata.uid);
    const { uid: _, ...metadata } = c.metadata;
    expect(holderOf({ ...c, metadata })).toBe('default/x');
  });
});

describe('a bind whose write failed', () => {
  test('its pod write failed: the hold is released at once', async () => {
    const { w, a } = await twoClaimsOnePick();
    const { client, state } = gatedClient(w.model);
    const bindsInFlight = new BindsInFlight();
    state.failKind = 'Pod';
    await expect(
      reconcilePodClaim({ ...w.deps, client, bindsInFlight }, w.key(a.metadata.name)),
    ).rejects.toThrow(/injected/);
    expect(bindsInFlight.size()).toBe(0);
  });

  test('its pod write landed and the claim write failed: the pod stays held', async () => {
    const { w, a, b } = await twoClaimsOnePick();
    const { client, state } = gatedClient(w.model);
    const bindsInFlight = new BindsInFlight();
    state.failKind = 'PodClaim';
    await expect(
      reconcilePodClaim({ ...w.deps, client, bindsInFlight }, w.key(a.metadata.name)),
    ).rejects.toThrow(/injected/);
    expect(bindsInFlight.size()).toBe(1);
    const taken = w.model
      .listNow('Pod')
      .find((p) => p.metadata.labels?.['claimkit.dev/claimed-by'] === a.metadata.name);
    expect(taken).toBeDefined();
    // The cache shows the pod's new version: the hold ends, and b does not take a Bound pod anyway.
    expect(bindsInFlight.heldByOther(taken!, holderOf(b), w.now())).toBe(false);
  });
});

describe('the pod informer ends holds (ProcessMemory.podHandler)', () => {
  test('a newer version of the pod, or its deletion, ends the hold at once', () => {
    const b = new BindsInFlight();
    const p = (name: string, rv: string) =>
      pod(name, (o) => {
        o.metadata.resourceVersion = rv;
      });
    b.hold(p('a', '1'), 'claim-a', 0);
    b.hold(p('b', '1'), 'claim-b', 0);
    b.observe(p('a', '1'));
    expect(b.holders(1)).toEqual(new Set(['claim-a', 'claim-b']));
    b.observe(p('a', '2'));
    b.observe(p('b', '1'), true);
    expect(b.size()).toBe(0);
  });
});
