// No thrash when the target drops under demand (DESIGN.md "PodPool"; pool/demand.ts), in the
// simulator: an autoscaler lowers the pool's minIdle (the scale subresource) while claims arrive,
// and the replica that scales the pool down has a pod informer behind its claim informer (another
// replica's binds show in its claims, not yet in its pods). The pool must delete only the Idle pods
// no waiting claim takes, and never create a pod for a claim that was already waiting.
//
// The pool is larger than the bind window (CANDIDATE_WINDOW): claims bind among the oldest Idle pods
// and scale-down deletes the newest, so a delete decided from the stale view does not hit a pod a
// claim has just taken (its resourceVersion precondition would fail) and lands, as at scale.
import { describe, expect, test } from 'vitest';
import type { WriteRecord } from '../model/api-model.ts';
import { CANDIDATE_WINDOW } from '../pool/bind-candidates.ts';
import { schemaModelOptions } from '../schema/index.ts';
import { NS } from './cluster.ts';
import { quietViolations, reconcileNow, settle, step } from './scenarios.ts';
import type { SimViolation } from './simulator.ts';
import { openWorld, type World } from './world.ts';

const podsOf = (ws: WriteRecord[], verb: 'create' | 'delete') =>
  ws.filter((x) => x.kind === 'Pod' && x.verb === verb).map((x) => x.name);

const idlePods = (w: World) =>
  w.model
    .listNow('Pod', { namespace: NS, labelSelector: { matchLabels: { 'claimkit.dev/pool': 'web' } } })
    .filter((p) => !p.metadata.deletionTimestamp && p.metadata.labels?.['claimkit.dev/state'] === 'Idle');

const podName = (w: World, claim: string) =>
  w.model.getNow('PodClaim', { namespace: NS, name: claim }).status?.podName;

interface Scenario {
  seed: number;
  /** Idle pods before (minIdle). */
  warm: number;
  /** minIdle after the autoscaler's write. */
  to: number;
  /** Claims that arrive, and how many of them replica 1 binds before the pool's scale-down. */
  arriving: number;
  bound: number;
}

async function minIdleDropsUnderDemand(x: Scenario) {
  const w = await openWorld(x.seed, {
    replicas: 2,
    pool: { minIdle: x.warm, maxPods: x.warm + 20 },
    modelOptions: schemaModelOptions(),
  });
  const violations: SimViolation[] = [];
  await settle(w);
  violations.push(...quietViolations(w));
  expect(idlePods(w)).toHaveLength(x.warm);
  // Replica 0's cache is current; from now on its pod events lag (its claim events do not).
  await w.ctls[0]!.cache.list('Pod');
  w.ctls[0]!.cache.kindLag = { Pod: 100_000 };
  const before = new Set(w.model.listNow('PodClaim', { namespace: NS }).map((c) => c.metadata.name));
  for (let i = 0; i < x.arriving; i++) violations.push(...(await step(w, { t: 'createClaim' })));
  const claims = w.model
    .listNow('PodClaim', { namespace: NS })
    .map((c) => c.metadata.name)
    .filter((n) => !before.has(n));
  expect(claims).toHaveLength(x.arriving);
  // Created as kubectl creates them: the first reconcile adds the release finalizer, the second binds.
  for (const c of claims.slice(0, x.bound)) {
    await reconcileNow(w, 1, 'PodClaim', c);
    await reconcileNow(w, 1, 'PodClaim', c);
  }
  expect(claims.filter((c) => podName(w, c))).toHaveLength(x.bound);
  const from = w.model.writes.length;
  violations.push(...(await step(w, { t: 'scalePool', minIdle: x.to })));
  await reconcileNow(w, 0, 'PodPool', 'web');
  const scaledDown = podsOf(w.model.writes.slice(from), 'delete');
  // Replica 0's pod informer catches up (the quiet period) and everything settles.
  await settle(w);
  violations.push(...quietViolations(w));
  const writes = w.model.writes.slice(from);
  return {
    violations,
    scaledDown: scaledDown.length,
    deleted: podsOf(writes, 'delete').length,
    created: podsOf(writes, 'create').length,
    waitingLeft: claims.filter((c) => !podName(w, c)),
    idle: idlePods(w).length,
  };
}

describe('simulator: minIdle lowered while claims arrive', () => {
  // 8 Idle pods beyond the bind window; minIdle 136 -> 125 with 6 claims (3 bound, 3 waiting): 133
  // Idle pods, 3 to be taken, 125 to keep: 5 are surplus. Before pool/demand.ts the stale pod view
  // counted the 3 taken pods Idle, deleted 8 and then created 3 for the waiting claims.
  const base = { warm: CANDIDATE_WINDOW + 8, to: CANDIDATE_WINDOW - 3, arriving: 6, bound: 3 };
  test.each([1, 2, 3])(
    'seed %i: no Idle pod deleted and then re-created for a claim already waiting',
    { timeout: 60_000 },
    async (seed) => {
      const r = await minIdleDropsUnderDemand({ seed, ...base });
      expect(r.violations).toEqual([]);
      expect(r.waitingLeft).toEqual([]);
      expect(r).toMatchObject({ scaledDown: 5, deleted: 5, created: 0, idle: base.to });
    },
  );
});
