// PodPool on the real control plane, issue 12: only pods that can serve are handed out (a cordoned
// node's Idle pods are replaced and claims never bind there), a pool whose pods cannot schedule
// creates its target once and holds, and spec.disruptionBudget keeps an owned PDB over Bound pods.
// The suite brings its own two kwok nodes (a label the pools select), so cordoning one touches no
// other suite's pods.
import { LABEL_POOL, LABEL_STATE, type Node, type Pod, type PodClaim, type PodPool } from '@claimkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { FAKE_NODE_ANNOTATION } from '../harness/local-components.ts';
import { testPool } from '../harness/objects.ts';
import { useTestNamespace } from '../harness/vitest.ts';
import {
  expectAllInvariants,
  finalizeClaims,
  getOrUndefined,
  isReady,
  kube,
  type RunningController,
  startController,
  until,
} from './helpers.ts';

const SELECT = 'claimkit.dev/e2e-serving';

function fakeNode(name: string, group: string): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [FAKE_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: { 'kubernetes.io/hostname': name, type: 'kwok', [SELECT]: group },
    },
    spec: {},
  };
}

function pool(ns: string, name: string, o: { minIdle: number; maxPods: number; selector: string }): PodPool {
  const p = testPool(ns, name, o);
  p.spec.template.spec.nodeSelector = { [SELECT]: o.selector };
  return p;
}

const claim = (ns: string, name: string, poolName: string): PodClaim => ({
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodClaim',
  metadata: { name, namespace: ns },
  spec: { poolName },
});

describe('PodPool: pods that can serve, no over-creation, disruption budget', () => {
  const ns = useTestNamespace('ctl-serving');
  const group = `g${process.pid}`;
  const nodes = [`ck-serving-${process.pid}-a`, `ck-serving-${process.pid}-b`];
  let ctl: RunningController | undefined;
  const stops: (() => void)[] = [];
  afterAll(async () => {
    for (const s of stops) s();
    if (ctl) await finalizeClaims(ns.name).catch(() => {});
    await ctl?.stop();
    for (const n of nodes)
      await getOrUndefined(kube().delete('Node', { namespace: '', name: n })).catch(() => {});
  });

  const poolPods = async (name: string): Promise<Pod[]> =>
    (await kube().list('Pod', { namespace: ns.name, labelSelector: { matchLabels: { [LABEL_POOL]: name } } }))
      .items;
  const idleOn = (pods: Pod[], node?: string) =>
    pods.filter(
      (p) =>
        p.metadata.labels?.[LABEL_STATE] === 'Idle' &&
        !p.metadata.deletionTimestamp &&
        (node === undefined || p.spec.nodeName === node),
    );

  it('replaces Idle pods on a cordoned node and never binds a claim there', async () => {
    const c = kube();
    for (const n of nodes) await c.create(fakeNode(n, group));
    await until('the suite nodes are Ready', async () => {
      for (const n of nodes) {
        const node = await c.get('Node', { namespace: '', name: n });
        if (!node.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')) return false;
      }
      return true;
    });
    ctl = await startController(ns.name);
    await c.create(pool(ns.name, 'serve', { minIdle: 4, maxPods: 12, selector: group }));
    await until(
      '4 Ready Idle pods',
      async () => idleOn(await poolPods('serve')).filter(isReady).length === 4,
      60_000,
    );
    // Cordon the node with the most Idle pods (the scheduler spreads them; either has some or all).
    const pods = idleOn(await poolPods('serve'));
    const counts = nodes.map((n) => pods.filter((p) => p.spec.nodeName === n).length);
    const cordoned = nodes[counts[0]! >= counts[1]! ? 0 : 1]!;
    const stranded = new Set(pods.filter((p) => p.spec.nodeName === cordoned).map((p) => p.metadata.name));
    expect(stranded.size).toBeGreaterThan(0);
    // Every bind from now on, as it happens: none may be to a pod on the cordoned node.
    const boundOnCordoned: string[] = [];
    stops.push(
      c.watch(
        'Pod',
        { namespace: ns.name },
        {
          onEvent: (e) => {
            if (e.object.spec.nodeName === cordoned && e.object.metadata.labels?.[LABEL_STATE] === 'Bound')
              boundOnCordoned.push(e.object.metadata.name);
          },
        },
      ),
    );
    await c.patch('Node', { namespace: '', name: cordoned }, { spec: { unschedulable: true } });
    for (const n of ['c1', 'c2', 'c3', 'c4', 'c5', 'c6']) await c.create(claim(ns.name, n, 'serve'));
    await until(
      '6 claims Bound',
      async () =>
        (await c.list('PodClaim', { namespace: ns.name })).items.filter((x) => x.status?.phase === 'Bound')
          .length === 6,
      60_000,
    );
    await until(
      'the cordoned node has no Idle pod left, 4 Ready Idle pods elsewhere',
      async () => {
        const now = await poolPods('serve');
        return idleOn(now, cordoned).length === 0 && idleOn(now).filter(isReady).length === 4;
      },
      60_000,
    );
    expect(boundOnCordoned).toEqual([]);
    const byName = new Map((await poolPods('serve')).map((p) => [p.metadata.name, p]));
    for (const cl of (await c.list('PodClaim', { namespace: ns.name })).items) {
      expect(byName.get(cl.status!.podName!)?.spec.nodeName, cl.metadata.name).not.toBe(cordoned);
      expect(stranded.has(cl.status!.podName!), cl.metadata.name).toBe(false);
    }
    await expectAllInvariants(ns.name);
  });

  it('a pool whose pods cannot schedule creates its target once and holds', async () => {
    const c = kube();
    ctl ??= await startController(ns.name);
    let added = 0;
    stops.push(
      c.watch(
        'Pod',
        { namespace: ns.name, labelSelector: { matchLabels: { [LABEL_POOL]: 'stuck' } } },
        { onEvent: (e) => void (e.type === 'ADDED' && added++) },
      ),
    );
    await c.create(pool(ns.name, 'stuck', { minIdle: 3, maxPods: 20, selector: 'no-such-node' }));
    await until(
      'the pool reports its pods unschedulable',
      async () =>
        (await c.get('PodPool', { namespace: ns.name, name: 'stuck' })).status?.conditions?.some(
          (x) => x.type === 'Ready' && x.reason === 'PodsUnschedulable',
        ) ?? false,
      60_000,
    );
    // Pending claims raise the target by one each; with the pods held they still cannot exceed it.
    for (const n of ['s1', 's2']) await c.create(claim(ns.name, n, 'stuck'));
    await until('5 pods, all unschedulable', async () => {
      const pods = await poolPods('stuck');
      return (
        pods.length === 5 &&
        pods.every((p) =>
          p.status?.conditions?.some((x) => x.type === 'PodScheduled' && x.status === 'False'),
        )
      );
    });
    // More reconciles (every spec change is one): the count stays at the target.
    for (let i = 0; i < 3; i++) {
      await c.patch('PodPool', { namespace: ns.name, name: 'stuck' }, { spec: { drainSeconds: i + 1 } });
      await until(
        `status observed generation ${i + 2}`,
        async () =>
          (await c.get('PodPool', { namespace: ns.name, name: 'stuck' })).status?.observedGeneration ===
          i + 2,
      );
    }
    expect((await poolPods('stuck')).length).toBe(5);
    expect(added).toBe(5);
    for (const n of ['s1', 's2']) await c.delete('PodClaim', { namespace: ns.name, name: n });
    await until('back to 3', async () => idleOn(await poolPods('stuck')).length === 3);
  });

  it('spec.disruptionBudget keeps an owned PodDisruptionBudget over the Bound pods', async () => {
    const c = kube();
    ctl ??= await startController(ns.name);
    const p = pool(ns.name, 'guarded', { minIdle: 1, maxPods: 5, selector: group });
    p.spec.disruptionBudget = { maxUnavailable: 0 };
    const created = await c.create(p);
    const key = { namespace: ns.name, name: 'guarded-bound' };
    const pdb = await until('the PDB', () => getOrUndefined(c.get('PodDisruptionBudget', key)));
    expect(pdb.spec).toMatchObject({
      selector: { matchLabels: { [LABEL_POOL]: 'guarded', [LABEL_STATE]: 'Bound' } },
      maxUnavailable: 0,
    });
    expect(pdb.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'PodPool', uid: created.metadata.uid });
    await c.patch('PodPool', { namespace: ns.name, name: 'guarded' }, { spec: { disruptionBudget: null } });
    await until(
      'the PDB deleted',
      async () => (await getOrUndefined(c.get('PodDisruptionBudget', key))) === undefined,
    );
  });
});
