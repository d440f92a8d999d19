// A pool with fewer Idle pods than waiting claims hands them out oldest claim first, and no claim
// writes for a pod that an older claim's turn (or a bind in flight) will take: no lost race, no 409
// (issue 41). The turn is the claim's place among its pool's waiting claims (pool/waiting-queue.ts).
import { describe, expect, test } from 'vitest';
import type { PodClaim } from '../api/types.ts';
import { BindsInFlight } from '../pool/binds-in-flight.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import {
  createdAt,
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
import { reconcilePodClaim } from './podclaim/index.ts';

async function poolWithClaims(pods: number, claims: number) {
  const w = world({ lag: 0 });
  await put(w.model, podPool('warm', withMinIdle(pods)));
  await put(w.model, node('n1'));
  for (let i = 0; i < pods; i++)
    await put(w.model, pod(`warm-${i}`, inPool('warm'), idle(), ready(), onNode('n1'), createdAt(i)));
  const made: PodClaim[] = [];
  for (let i = 0; i < claims; i++)
    made.push(
      await put(w.model, podClaim(`c${i}`, forPool('warm'), withReleaseFinalizer(), createdAt(100 + i))),
    );
  w.cache.sync();
  // The event router's index, as the PodClaim watch fed it.
  const waiting = new ClaimIndex(made);
  const { client, state } = gatedClient(w.model);
  const deps = { ...w.deps, client, bindsInFlight: new BindsInFlight(), waiting };
  const podOf = (name: string) => w.get('PodClaim', name).status?.podName;
  return { w, deps, state, waiting, podOf };
}

describe('claims take their turns for a pool’s Idle pods', () => {
  test('reconciled newest first, the two oldest claims get the two pods, oldest pod to oldest claim', async () => {
    const { w, deps, state, podOf } = await poolWithClaims(2, 5);
    for (let i = 4; i >= 0; i--) await reconcilePodClaim(deps, w.key(`c${i}`));
    expect(['c0', 'c1', 'c2', 'c3', 'c4'].map(podOf)).toEqual([
      'warm-0',
      'warm-1',
      undefined,
      undefined,
      undefined,
    ]);
    expect(state.conflicts).toBe(0);
    // The claims behind them say why they wait, and took no pod.
    expect(w.get('PodClaim', 'c4').status?.phase).toBe('Pending');
    expect(w.tracker.violations).toEqual([]);
  });

  test('a bind in flight is not ahead: the next claim takes the next free pod while it writes', async () => {
    const { w, deps, state, podOf } = await poolWithClaims(2, 3);
    let open!: () => void;
    state.gate = new Promise<void>((r) => {
      open = r;
    });
    const atGate = new Promise<void>((r) => {
      state.atGate = r;
    });
    const first = reconcilePodClaim(deps, w.key('c0'));
    await atGate; // c0 decided on warm-0; its pod patch waits
    state.gate = undefined;
    await reconcilePodClaim(deps, w.key('c1'));
    // c2 is behind c1 (not in flight): its turn is the third pod, which the pool does not have.
    await reconcilePodClaim(deps, w.key('c2'));
    open();
    await first;
    expect(['c0', 'c1', 'c2'].map(podOf)).toEqual(['warm-0', 'warm-1', undefined]);
    expect(state.conflicts).toBe(0);
    expect(w.tracker.violations).toEqual([]);
  });

  test('a claim that stopped waiting moves the others up: the next Idle pod goes to the oldest left', async () => {
    const { w, deps, waiting, podOf } = await poolWithClaims(1, 3);
    await reconcilePodClaim(deps, w.key('c0'));
    waiting.upsert(w.get('PodClaim', 'c0')); // its bind seen by the index
    await put(w.model, pod('warm-9', inPool('warm'), idle(), ready(), onNode('n1'), createdAt(9)));
    w.cache.sync();
    await reconcilePodClaim(deps, w.key('c2'));
    await reconcilePodClaim(deps, w.key('c1'));
    expect(['c0', 'c1', 'c2'].map(podOf)).toEqual(['warm-0', 'warm-9', undefined]);
  });

  test('a claim Lost for good (lostPolicy Fail) holds no turn', () => {
    const lost = podClaim('old', forPool('warm'), createdAt(1), (c) => {
      c.spec.lostPolicy = 'Fail';
      c.status = { phase: 'Lost' };
    });
    const idx = new ClaimIndex([lost, podClaim('new', forPool('warm'), createdAt(2))]);
    expect(idx.waitingFor('default', 'warm')).toEqual(['new']);
    expect(idx.waitingAhead('default', 'warm', 'new', new Set())).toBe(0);
  });

  test('without the index a claim picks by its UID’s hash, as before', async () => {
    const { w, deps } = await poolWithClaims(2, 1);
    const { waiting: _, ...noIndex } = deps;
    await reconcilePodClaim(noIndex, w.key('c0'));
    expect(w.get('PodClaim', 'c0').status?.podName).toMatch(/^warm-/);
  });
});
