// `pnpm bench pool-reconcile`: what one PodPool reconcile costs the controller's thread as its pool
// grows, in process (no control plane): the controller's informer cache (its indexes) over core's
// API model, one pool of N Ready Idle pods plus 300 bound claims, and rounds that each bind one Idle pod
// (the pod's CAS and the claim's spec.podName, as a bind writes them) and then reconcile the pool, as
// the controller does after a bind (with its pool pod index). Reported: CPU ms per reconcile (gather +
// decide + apply), by N. Target (issue 22): independent of the number of Idle pods.
import { performance } from 'node:perf_hooks';
import type { Node, Pod } from '@claimkit/core';
import {
  ANNOTATION_CLAIMED_BY_UID,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  PoolExpectations,
  PoolPodIndex,
  reconcilePodPool,
} from '@claimkit/core';
import { ApiModel } from '@claimkit/core/model';
import {
  boundTo,
  claimedBy,
  createdAt,
  forPool,
  idle,
  inNamespace,
  inPool,
  node,
  onNode,
  pod,
  podClaim,
  podPool,
  ready,
  withMaxPods,
  withMinIdle,
} from '@claimkit/core/testing';
import { InformerCache } from '@claimkit/kube';
import { atMost, type Target } from './stats.ts';

export interface PoolReconcileRun {
  idlePods: number;
  boundClaims: number;
  rounds: number;
  /** CPU (user + system) ms per reconcile, median and p90 over the rounds. */
  cpuMsPerReconcile: { p50: number; p90: number; mean: number };
  /** Wall ms per reconcile (the same rounds). */
  wallMsPerReconcile: { p50: number; p90: number };
}

const NS = 'bench';
const POOL = 'web';
const NODES = 20;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Settles the model's watch deliveries into the cache (they are delivered asynchronously). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

export async function benchPoolReconcileAt(
  idlePods: number,
  boundClaims: number,
  rounds: number,
): Promise<PoolReconcileRun> {
  const model = new ApiModel();
  const cache = new InformerCache(model);
  cache.informerFor('Pod', {
    indexLabels: [LABEL_POOL, LABEL_STATE, LABEL_CLAIMED_BY],
    indexLabelSets: [[LABEL_POOL, LABEL_STATE]],
  });
  cache.informerFor('PodClaim', { indexFields: ['spec.podName', 'spec.sourcePod'] });
  cache.informerFor('PodPool');
  cache.informerFor('PodDisruptionBudget');
  cache.informerFor('Node', { clusterScoped: true });
  // The pool pod index, fed by the pod informer as the controller's Manager feeds it.
  const poolPods = new PoolPodIndex();
  cache.informerFor('Pod').addHandler({
    onAdd: (p) => poolPods.upsert(p),
    onUpdate: (_old, p) => poolPods.upsert(p),
    onDelete: (p) => poolPods.remove(p),
  });
  // The model keeps the status subresource apart (as the API server does): written after the create.
  const createWithStatus = async <T extends Pod | Node>(o: T): Promise<void> => {
    const made = await model.create(o);
    await model.patchStatus(
      o.kind as 'Pod' | 'Node',
      { namespace: made.metadata.namespace ?? '', name: made.metadata.name },
      { status: o.status },
    );
  };
  for (let n = 0; n < NODES; n++) await createWithStatus(node(`node-${n}`));
  // Room for the replacement each round creates, so every round is a full pass (no maxPods stop).
  const total = idlePods + boundClaims + rounds;
  await model.create(podPool(POOL, inNamespace(NS), withMinIdle(idlePods), withMaxPods(total * 2)));
  for (let i = 0; i < idlePods + boundClaims; i++) {
    const name = `${POOL}-${i}`;
    const mods = [inNamespace(NS), inPool(POOL), ready(), onNode(`node-${i % NODES}`), createdAt(i)];
    if (i < boundClaims) {
      const claim = await model.create(podClaim(`c-${i}`, inNamespace(NS), forPool(POOL), boundTo(name)));
      await createWithStatus(pod(name, ...mods, claimedBy(claim)));
    } else await createWithStatus(pod(name, ...mods, idle()));
  }
  await cache.start();
  await cache.waitForSync();
  const expectations = new PoolExpectations();
  const deps = { cache, client: model, now: () => Date.now(), expectations, poolPods };
  const key = { namespace: NS, name: POOL };
  // Settles the pool (status, PDB) before measuring.
  await reconcilePodPool(deps, key);
  await settle();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // Bind the oldest Idle pod to a new claim, as a bind writes it: the pod's CAS, then the claim.
    const victim = `${POOL}-${boundClaims + r}`;
    const claim = await model.create(podClaim(`b-${r}`, inNamespace(NS), forPool(POOL)));
    await model.patch(
      'Pod',
      { namespace: NS, name: victim },
      {
        metadata: {
          labels: { [LABEL_STATE]: 'Bound', [LABEL_CLAIMED_BY]: claim.metadata.name },
          annotations: { [ANNOTATION_CLAIMED_BY_UID]: claim.metadata.uid! },
        },
      },
    );
    await model.patch(
      'PodClaim',
      { namespace: NS, name: claim.metadata.name },
      { spec: { podName: victim } },
    );
    await settle();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await reconcilePodPool(deps, key);
    const t1 = performance.now();
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    wall.push(t1 - t0);
    await settle();
  }
  cache.stop();
  return {
    idlePods,
    boundClaims,
    rounds,
    cpuMsPerReconcile: {
      p50: r3(quantile(cpu, 0.5)),
      p90: r3(quantile(cpu, 0.9)),
      mean: r3(cpu.reduce((a, b) => a + b, 0) / cpu.length),
    },
    wallMsPerReconcile: { p50: r3(quantile(wall, 0.5)), p90: r3(quantile(wall, 0.9)) },
  };
}

/** The pool sizes the benchmark compares (Idle pods), each beside the same bound claims. */
export const POOL_RECONCILE_SIZES = [1000, 3000, 10000] as const;
/** Bound claims (and their pods) beside the Idle pods: the same at every size, so only Idle pods grow. */
export const POOL_RECONCILE_BOUND = 300;

export interface PoolReconcileResult {
  runs: PoolReconcileRun[];
  /** p50 CPU per reconcile at the largest pool ÷ at the smallest (1: independent of the Idle count). */
  growth: number;
  /** p50 CPU ms per reconcile added per 1,000 Idle pods (least squares over the runs). */
  msPer1000Idle: number;
}

export async function benchPoolReconcile(rounds = 300): Promise<PoolReconcileResult> {
  const runs: PoolReconcileRun[] = [];
  for (const n of POOL_RECONCILE_SIZES)
    runs.push(await benchPoolReconcileAt(n, POOL_RECONCILE_BOUND, rounds));
  const xs = runs.map((r) => r.idlePods / 1000);
  const ys = runs.map((r) => r.cpuMsPerReconcile.p50);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const slope =
    xs.reduce((a, x, i) => a + (x - mx) * (ys[i]! - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  return {
    runs,
    growth: r3(ys[ys.length - 1]! / ys[0]!),
    msPer1000Idle: r3(slope),
  };
}

/** The growth target: "pool reconcile cost independent of idle-pod count" (issue 22), with 1.5x slack. */
export function poolReconcileRows(r: PoolReconcileResult): Array<[string, Target]> {
  const first = r.runs[0]!;
  const last = r.runs[r.runs.length - 1]!;
  return [
    [
      `CPU per reconcile at ${last.idlePods} Idle / at ${first.idlePods} (${last.cpuMsPerReconcile.p50} / ${first.cpuMsPerReconcile.p50} ms)`,
      atMost(r.growth, 1.5),
    ],
  ];
}
