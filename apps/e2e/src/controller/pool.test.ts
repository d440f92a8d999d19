// PodPool on the real control plane: minIdle is kept as claims bind, and scale-down deletes only
// Idle pods, even while binds race it (a delete carries the resourceVersion it observed).
import { LABEL_STATE, type Pod, type PodClaim } from '@claimkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { testPool } from '../harness/objects.ts';
import { useTestNamespace } from '../harness/vitest.ts';
import {
  expectAllInvariants,
  finalizeClaims,
  kube,
  type RunningController,
  startController,
  until,
} from './helpers.ts';

describe('PodPool', () => {
  const ns = useTestNamespace('ctl-pool');
  let ctl: RunningController | undefined;
  let stopWatch: (() => void) | undefined;
  afterAll(async () => {
    stopWatch?.();
    if (ctl) await finalizeClaims(ns.name).catch(() => {});
    await ctl?.stop();
  });

  it('keeps minIdle and never deletes a Bound or Draining pod, even racing a bind', async () => {
    const c = kube();
    // Every pod deletion, with the labels the pod had when it was deleted.
    const deleted: Pod[] = [];
    const stopWatching = c.watch(
      'Pod',
      { namespace: ns.name, allowWatchBookmarks: true },
      {
        onEvent: (e) => {
          if (e.type === 'DELETED' || (e.type === 'MODIFIED' && e.object.metadata.deletionTimestamp))
            deleted.push(e.object);
        },
      },
    );
    stopWatch = stopWatching;
    ctl = await startController(ns.name);
    const pool = testPool(ns.name, 'warm', { minIdle: 3, maxPods: 30 });
    await c.create(pool);
    const idle = async () =>
      (await c.list('Pod', { namespace: ns.name })).items.filter(
        (p) =>
          p.metadata.labels?.[LABEL_STATE] === 'Idle' &&
          !p.metadata.deletionTimestamp &&
          p.status?.phase === 'Running',
      );
    await until('3 Idle pods', async () => (await idle()).length === 3);
    const mkClaim = (name: string): PodClaim => ({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name, namespace: ns.name },
      spec: { poolName: 'warm' },
    });
    for (const n of ['c1', 'c2']) await c.create(mkClaim(n));
    await until('2 bound, minIdle 3 kept', async () => {
      const cs = (await c.list('PodClaim', { namespace: ns.name })).items;
      return cs.filter((x) => x.status?.phase === 'Bound').length === 2 && (await idle()).length === 3;
    });

    // Scale down to 0 Idle while 4 more claims bind at the same moment.
    await Promise.all([
      c.patch('PodPool', { namespace: ns.name, name: 'warm' }, { spec: { minIdle: 0 } }),
      ...['c3', 'c4', 'c5', 'c6'].map((n) => c.create(mkClaim(n))),
    ]);
    await until(
      '6 bound claims',
      async () =>
        (await c.list('PodClaim', { namespace: ns.name })).items.filter((x) => x.status?.phase === 'Bound')
          .length === 6,
    );
    await until('no Idle pods left', async () => (await idle()).length === 0);
    const badDeletes = deleted.filter((p) => p.metadata.labels?.[LABEL_STATE] !== 'Idle');
    expect(badDeletes.map((p) => `${p.metadata.name} (${p.metadata.labels?.[LABEL_STATE]})`)).toEqual([]);
    const podNames = new Set((await c.list('Pod', { namespace: ns.name })).items.map((p) => p.metadata.name));
    for (const cl of (await c.list('PodClaim', { namespace: ns.name })).items)
      expect(podNames.has(cl.status!.podName!), cl.metadata.name).toBe(true);
    await expectAllInvariants(ns.name);
  });
});
