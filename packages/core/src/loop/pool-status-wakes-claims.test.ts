// A replay finding: a Pending claim kept saying NoReadyPod for 3-5 s after its pool reached maxPods,
// because a pool's status change reached only the pool (coalesced) and the claim waited for its own
// requeue timer. A pool change that matters to its waiting claims (at maxPods or not, Idle pods
// appearing, the pool created or deleted) routes to them at once; the pool's own key stays coalesced.
import { describe, expect, test } from 'vitest';
import { findCondition } from '../api/conditions.ts';
import type { AnyObject, PodClaim, PodPool } from '../api/types.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import { bindPodWrite } from '../pool/pods.ts';
import { applyDecision } from '../reconcile/apply.ts';
import { reconcilePodClaim } from '../reconcile/podclaim/index.ts';
import { WAIT_MS } from '../reconcile/podclaim/snapshot.ts';
import { reconcilePodPool } from '../reconcile/podpool/index.ts';
import {
  forPool,
  idle,
  inPool,
  onNode,
  pod,
  podClaim,
  podPool,
  poolStatus,
  withMaxPods,
  withMinIdle,
  withReleaseFinalizer,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { type World, world } from '../testing/world.ts';
import { EventRouter } from './event-router.ts';
import { mapEvent, type RoutingView } from './map-event.ts';
import { parseReconcileKey, type ReconcileKind } from './reconcile-key.ts';
import type { RoutedKind } from './routed-key.ts';

const COALESCE_MS = 500;
const NS = 'default';

/** The model's watches routed through the event router into a due-time queue, as the World does. */
function routed(w: World) {
  const due = new Map<string, number>();
  const routedNow: string[][] = [];
  const router = new EventRouter({
    view: {
      captures: (ns) => w.model.listNow('Capture', { namespace: ns }),
      pools: (ns) => w.model.listNow('PodPool', { namespace: ns }),
    },
    allPools: () => w.model.listNow('PodPool', {}),
    coalesceMs: COALESCE_MS,
  });
  const lastSeen = new Map<string, AnyObject>();
  for (const kind of ['Pod', 'PodClaim', 'PodPool'] as const satisfies RoutedKind[])
    w.model.watch(
      kind,
      {},
      {
        onEvent: (e) => {
          const obj = e.object as AnyObject;
          const id = `${kind}|${obj.metadata.name}`;
          const old = lastSeen.get(id);
          if (e.type === 'DELETED') lastSeen.delete(id);
          else lastSeen.set(id, obj);
          const keys =
            e.type === 'DELETED' ? router.route(kind, old ?? obj, undefined) : router.route(kind, old, obj);
          routedNow.push(keys.filter((k) => k.delayMs === 0).map((k) => k.key));
          for (const k of keys) {
            const at = w.clock.now() + k.delayMs;
            due.set(k.key, Math.min(due.get(k.key) ?? at, at));
          }
        },
      },
    );
  const reconcilers: Partial<Record<ReconcileKind, typeof reconcilePodClaim>> = {
    PodClaim: reconcilePodClaim,
    PodPool: reconcilePodPool,
  };
  /** Runs every key due by now (and what they route), as workers would; returns the keys run. */
  async function runDue(): Promise<string[]> {
    const ran: string[] = [];
    for (let i = 0; i < 100; i++) {
      const next = [...due].find(([, at]) => at <= w.clock.now());
      if (!next) return ran;
      due.delete(next[0]);
      const { kind, namespace, name } = parseReconcileKey(next[0]);
      await reconcilers[kind]?.(w.deps, { namespace, name });
      ran.push(next[0]);
    }
    throw new Error('keys did not settle');
  }
  return { runDue, due, routedNow, router };
}

const boundReason = (c: PodClaim) => findCondition(c.status?.conditions, 'Bound')?.reason;

describe('a pool status change that matters reaches its waiting claims at once', () => {
  test('a claim waiting on a pool that reaches maxPods says PoolAtMaxPods before its requeue timer', async () => {
    const w = world();
    const { runDue, due } = routed(w);
    await put(w.model, podPool('web', withMaxPods(1), withMinIdle(0), poolStatus({ total: 0, idle: 0 })));
    // One pod, Idle but not Ready yet: the claim waits for it.
    await put(w.model, pod('p1', inPool('web'), onNode('n1'), idle()));
    await put(w.model, podClaim('b', forPool('web'), withReleaseFinalizer()));
    await runDue();
    w.clock.advance(COALESCE_MS);
    await runDue();
    expect(w.get('PodPool', 'web').status).toMatchObject({ total: 1, idle: 1 });
    expect(boundReason(w.get('PodClaim', 'b'))).toBe('NoReadyPod');
    const started = w.clock.now();

    // Someone else's claim takes the pool's only pod: the pool is at maxPods with nothing Idle.
    const a = await put(w.model, podClaim('a', forPool('web'), withReleaseFinalizer()));
    await applyDecision(w.model, { writes: [bindPodWrite(w.get('Pod', 'p1'), a)], events: [] });
    await runDue();
    // The pool reconciles when its coalescing window ends; its status write is routed.
    w.clock.advance(COALESCE_MS);
    await runDue();
    expect(w.get('PodPool', 'web').status).toMatchObject({ total: 1, idle: 0 });
    const b = w.get('PodClaim', 'b');
    expect(boundReason(b)).toBe('PoolAtMaxPods');
    expect(findCondition(b.status?.conditions, 'Bound')?.message).toContain('maxPods');
    expect(w.clock.now() - started).toBeLessThan(WAIT_MS);
    expect(w.reasons()).toContain('PoolAtMaxPods');
    expect([...due.keys()].filter((k) => k.startsWith('PodClaim|') && due.get(k)! <= w.clock.now())).toEqual(
      [],
    );
  });
});

describe('mapEvent: which pool changes reach its waiting claims', () => {
  const view = (claims: PodClaim[]): RoutingView => ({
    captures: () => [],
    pools: () => [],
    references: new ClaimIndex(claims),
  });
  const claims = [
    podClaim('waiting', forPool('web')),
    podClaim('bound', forPool('web'), (c) => {
      c.spec.podName = 'p1';
    }),
    podClaim('other-pool', forPool('batch')),
    podClaim('deleting', forPool('web'), (c) => {
      c.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    }),
  ];
  const pool = (status: NonNullable<PodPool['status']>, maxPods = 2) =>
    podPool('web', withMaxPods(maxPods), poolStatus(status));
  const keys = (old: PodPool | undefined, cur: PodPool | undefined) =>
    mapEvent('PodPool', old, cur, view(claims)).sort();
  const POOL = `PodPool|${NS}/web`;
  const WAITING = `PodClaim|${NS}/waiting`;

  test('reaching maxPods with nothing Idle, or leaving it', () => {
    const free = pool({ total: 1, idle: 0 });
    const full = pool({ total: 2, idle: 0 });
    expect(keys(free, full)).toEqual([WAITING, POOL]);
    expect(keys(full, free)).toEqual([WAITING, POOL]);
  });

  test('Idle pods appearing; maxPods raised', () => {
    expect(keys(pool({ total: 2, idle: 0 }), pool({ total: 2, idle: 1 }))).toEqual([WAITING, POOL]);
    expect(keys(pool({ total: 2, idle: 0 }), pool({ total: 2, idle: 0 }, 3))).toEqual([WAITING, POOL]);
  });

  test('the pool created or deleted (PoolNotFound comes or goes)', () => {
    expect(keys(undefined, pool({ total: 0, idle: 0 }))).toEqual([WAITING, POOL]);
    expect(keys(pool({ total: 0, idle: 0 }), undefined)).toEqual([WAITING, POOL]);
  });

  test('a change that tells a waiting claim nothing new reaches only the pool', () => {
    expect(keys(pool({ total: 1, idle: 1 }), pool({ total: 2, idle: 1 }))).toEqual([POOL]);
    expect(keys(pool({ total: 2, idle: 2 }), pool({ total: 2, idle: 1 }))).toEqual([POOL]);
  });
});
