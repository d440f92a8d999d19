// A controller that dies mid-decision loses its memory (queue, pool expectations, own writes),
// however the write that killed it was made: core's apply step turns a thrown non-API error into
// a failed write (Unavailable), so the World must not rely on the CrashNow reaching it.
import { describe, expect, test } from 'vitest';
import { reconcileKey } from '../loop/reconcile-key.ts';
import { apply } from './apply.ts';
import { NS } from './cluster.ts';
import { openWorld } from './world.ts';

describe('simulator: a crash mid-decision', () => {
  test("a crash on a claim's bind (a write through the apply step) restarts the replica", async () => {
    const w = await openWorld(7, { replicas: 1 });
    for (let i = 0; i < 60; i++) {
      await w.reconcileNext(0);
      await apply(w, { t: 'kubelet' });
      w.clock.advance(500);
    }
    await w.createClaim();
    const before = w.ctls[0]!;
    await w.reconcileNext(0, 0, reconcileKey('PodClaim', NS, 'solo-1'));
    expect(w.stats.crash).toBe(1);
    expect(w.ctls[0]).not.toBe(before);
    expect(w.ctls[0]!.memory).not.toBe(before.memory);
    // Nothing of the dead decision landed: the new claim is still unbound.
    const claim = w.model.peek('PodClaim').find((c) => c.metadata.name === 'solo-1');
    expect(claim?.status?.phase ?? 'Pending').toBe('Pending');
  });

  test('a crash while the pool creates its first pods restarts the replica', async () => {
    const w = await openWorld(7, { replicas: 1, pool: { minIdle: 3, maxPods: 8 } });
    const before = w.ctls[0];
    await w.reconcileNext(0, 0, reconcileKey('PodPool', NS, 'web'));
    expect(w.stats.crash).toBe(1);
    expect(w.ctls[0]).not.toBe(before);
  });
});
