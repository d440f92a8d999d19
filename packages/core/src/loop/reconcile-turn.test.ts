// One turn of the loop on the in-memory model: the own-writes skip, the reconcile with its own writes
// recorded, the queue policy performed, as the controller's workers and the simulator's replicas take it.
import { describe, expect, test } from 'vitest';
import { keyOf } from '../api/meta.ts';
import type { PodClaim } from '../api/types.ts';
import { ApiModel } from '../model/api-model.ts';
import { CacheView } from '../model/cache-view.ts';
import { ManualClock } from '../model/clock.ts';
import type { AppliedDecision, StepStages } from '../reconcile/step.ts';
import { schemaModelOptions } from '../schema/validate.ts';
import { FakeTimers } from '../testing/fake-timers.ts';
import { idle, inPool, onNode, pod, podClaim, podPool, withMinIdle } from '../testing/fixtures.ts';
import { OWN_WRITES_TTL_MS, OwnWrites } from './own-writes.ts';
import { reconcileKey } from './reconcile-key.ts';
import { reconcileTurn, type TurnIdentity, type TurnOptions } from './reconcile-turn.ts';
import { WorkQueue } from './work-queue.ts';

async function world() {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const model = new ApiModel({ clock, ...schemaModelOptions() });
  const claim = (await model.create(podClaim('a'))) as PodClaim;
  const cache = new CacheView(model, 0);
  const timers = new FakeTimers();
  const queue = new WorkQueue({ timers, baseDelayMs: 10, burst: 1000 });
  const ownWrites = new OwnWrites(() => clock.now());
  const opts: TurnOptions = {
    cachedVersion: async (kind, key) =>
      (await cache.get(kind, key).catch(() => undefined))?.metadata.resourceVersion,
    ownWrites,
    queue,
    deps: { cache, client: model, now: () => clock.now() },
  };
  return { model, claim, cache, queue, ownWrites, opts, key: reconcileKey('PodClaim', 'default', 'a') };
}

describe('reconcileTurn', () => {
  test('reconciles, queues by the policy, and remembers the versions it replaced', async () => {
    const { model, claim, cache, ownWrites, opts, key } = await world();
    cache.lag = 1000; // the cache will not see the turn's writes
    const turn = await reconcileTurn(key, opts);
    expect(turn).toMatchObject({ kind: 'PodClaim', namespace: 'default', name: 'a', skipped: false });
    expect(turn.error).toBeUndefined();
    const now = model.tryGetNow('PodClaim', keyOf(claim))!;
    expect(now.metadata.resourceVersion).not.toBe(claim.metadata.resourceVersion); // it wrote
    expect(ownWrites.cacheIsBehind(key, claim.metadata.resourceVersion)).toBe(true);
  });

  test('skips while the cache shows a version it replaced; the safety net waits the TTL', async () => {
    const { claim, queue, ownWrites, opts, key } = await world();
    ownWrites.record(key, claim.metadata.resourceVersion, ['999']);
    const turn = await reconcileTurn(key, opts);
    expect(turn).toMatchObject({ skipped: true, delay: OWN_WRITES_TTL_MS });
    expect(turn.action).toEqual({
      next: 'forget-then-add-after',
      ms: OWN_WRITES_TTL_MS,
      result: 'cache_behind',
    });
    expect(queue.delayed()).toBe(1);
    // Forced (the simulator's interleavings), it reconciles anyway.
    expect((await reconcileTurn(key, { ...opts, force: true })).skipped).toBe(false);
  });

  test('a failure is retried rate-limited and reported; a propagated error ends the turn as it is', async () => {
    const { model, queue, opts, key } = await world();
    model.faults.inject({ reason: 'Unavailable' });
    const turn = await reconcileTurn(key, { ...opts, deps: { ...opts.deps, cache: model } });
    expect(turn.action.next).toBe('retry-rate-limited');
    expect(turn.delay).toBe(10);
    expect(turn.error).toMatchObject({ reason: 'Unavailable' });
    await expect(
      reconcileTurn(key, { ...opts, deps: { ...opts.deps, cache: model }, propagate: () => true }),
    ).rejects.toMatchObject({ reason: 'Unavailable' });
    expect(queue.numRequeues(key)).toBe(1);
  });

  test('each turn gets a fresh id from the injected source, and its step observer knows the turn', async () => {
    const { model, opts, key } = await world();
    await model.create(podPool('web', withMinIdle(0)));
    const p = await model.create(pod('p1', inPool('web'), onNode('n1'), idle()));
    model.setPodStatusNow(keyOf(p), { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
    let n = 0;
    let ms = 0;
    const seen: { turn: TurnIdentity; applied: AppliedDecision[]; stages: StepStages }[] = [];
    const observed: TurnOptions = {
      ...opts,
      deps: { ...opts.deps, cache: model },
      newReconcileID: () => `r${++n}`,
      // A clock that moves 1 ms per read: every stage that ran took at least 1 ms.
      stepObserver: (turn) => ({
        now: () => ms++,
        done: (applied, stages) => void seen.push({ turn, applied: [...applied], stages }),
      }),
    };
    const turns = [];
    for (let i = 0; i < 5; i++) turns.push(await reconcileTurn(key, observed));
    expect(turns.map((t) => t.reconcileID)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(seen.map((s) => s.turn)).toEqual(
      turns.map((t) => ({ kind: 'PodClaim', namespace: 'default', name: 'a', reconcileID: t.reconcileID })),
    );
    // The bind: one decision applied, its Bound Event among its Events, every stage timed.
    const bind = seen.find((s) => s.applied.some((a) => a.decision.events.some((e) => e.reason === 'Bound')));
    expect(bind?.applied[0]?.result.failed).toBeUndefined();
    expect(bind?.stages.gatherMs).toBeGreaterThan(0);
    expect(bind?.stages.decideMs).toBeGreaterThan(0);
    expect(bind?.stages.applyMs).toBeGreaterThan(0);
    expect(model.getNow('PodClaim', { namespace: 'default', name: 'a' }).status?.podName).toBe('p1');
    // Without the options a turn has no id and the step reads no clock.
    expect((await reconcileTurn(key, opts)).reconcileID).toBeUndefined();
  });
});
