// A pool's counts-only status changes are paced per process (pool/status-pacer.ts): one status write
// per pool per interval while binds change its counts; a change to what the status says (a condition
// flips, a new template) is written at once; the pool comes back to write the counts it held.
import { describe, expect, test } from 'vitest';
import type { PodClaim, PodPool } from '../api/types.ts';
import { reconcilePodPool } from '../reconcile/podpool/index.ts';
import {
  claimedBy,
  idle,
  inPool,
  onNode,
  pod,
  podClaim,
  podPool,
  podTemplate,
  ready,
  withMaxPods,
  withMinIdle,
  withSpec,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { PoolStatusPacer } from './status-pacer.ts';

const NS = 'default';
const key = { namespace: NS, name: 'web' };

async function pacedPool() {
  const w = world();
  const pacer = new PoolStatusPacer(2000);
  const deps = { ...w.deps, statusPacer: pacer };
  await put(w.model, podPool('web', withMinIdle(3), withMaxPods(3)));
  for (const n of ['a', 'b', 'c']) await put(w.model, pod(n, inPool('web'), idle(), ready(), onNode('n1')));
  const statusWrites = () =>
    w.model.writes.filter((x) => x.verb === 'patchStatus' && x.kind === 'PodPool').length;
  const status = () => w.model.getNow('PodPool', key).status;
  /** A claim takes pod `name` (its pod write and its claim), as a bind leaves them. */
  const bind = async (name: string) => {
    const c = await put(w.model, podClaim(`c-${name}`, withSpec<PodClaim>({ podName: name })));
    const bound = pod(name, claimedBy(c));
    await w.model.patch(
      'Pod',
      { namespace: NS, name },
      { metadata: { labels: bound.metadata.labels!, annotations: bound.metadata.annotations! } },
    );
  };
  return { w, deps, statusWrites, status, bind, clock: w.clock };
}

describe('pool status pacing', () => {
  test('counts alone wait for the interval; the pool is requeued for them', async () => {
    const { deps, statusWrites, status, bind, clock } = await pacedPool();
    await reconcilePodPool(deps, key);
    expect(statusWrites()).toBe(1);
    expect(status()?.idle).toBe(3);
    await bind('a');
    clock.advance(500);
    const r = await reconcilePodPool(deps, key);
    // Only counts changed (Ready stays True, MinIdleKept: maxPods leaves room for 2 Idle, and 2 are),
    // so nothing is written yet, and the pool comes back when the interval is up.
    expect(statusWrites()).toBe(1);
    expect(status()?.idle).toBe(3);
    expect(r.requeueAfterMs).toBe(1500);
    clock.advance(1500);
    await reconcilePodPool(deps, key);
    expect(statusWrites()).toBe(2);
    expect(status()?.idle).toBe(2);
    expect(status()?.bound).toBe(1);
  });

  test('a change to what the status says is written at once', async () => {
    const { w, deps, statusWrites, status, clock } = await pacedPool();
    await reconcilePodPool(deps, key);
    expect(statusWrites()).toBe(1);
    clock.advance(100);
    // A new template: the hash, the rollout condition and the counts by template change.
    const pool = w.model.getNow('PodPool', key) as PodPool;
    await w.model.update({ ...pool, spec: { ...pool.spec, template: podTemplate({ app: 'web', v: '2' }) } });
    await reconcilePodPool(deps, key);
    expect(statusWrites()).toBe(2);
    expect(status()?.outdated).toBe(3);
  });

  test('without a pacer (a test, a tool) every change is written at once', async () => {
    const { w, statusWrites, status, bind } = await pacedPool();
    await reconcilePodPool(w.deps, key);
    await bind('a');
    await reconcilePodPool(w.deps, key);
    expect(statusWrites()).toBe(2);
    expect(status()?.idle).toBe(2);
  });
});
