// Warm: the pools are created, their minIdle adding up to `warm` and their maxPods to warm + refill,
// and the phase ends once every pool has its minIdle Idle and Ready.
import { testPool, waitFor } from '@claimkit/e2e/harness';
import type { BenchContext } from '../context.ts';
import type { WarmPoolScaleOptions } from './options.ts';
import type { RunPlan } from './set-up.ts';
import type { PoolView } from './watches.ts';

export async function warmPools(
  ctx: BenchContext,
  o: WarmPoolScaleOptions,
  run: RunPlan,
  view: PoolView,
): Promise<{ warmSeconds: number }> {
  const { plan, namespaces, maxPods } = run;
  const poolsText =
    plan.length === 1
      ? `PodPool minIdle ${o.warm}, maxPods ${maxPods}`
      : `${plan.length} PodPools in ${o.namespaces} namespace(s), minIdle ${plan.map((p) => p.minIdle).join('/')}, maxPods ${plan.map((p) => p.maxPods).join('/')}`;
  ctx.say(`warming ${o.warm} pods (${poolsText}) ...`);
  const tw0 = performance.now();
  await Promise.all(
    plan.map((p) =>
      ctx.kube.create(
        testPool(namespaces[p.namespace]!, p.name, {
          minIdle: p.minIdle,
          maxPods: p.maxPods,
          image: 'registry.k8s.io/pause:3.10',
        }),
      ),
    ),
  );
  let lastLog = 0;
  await waitFor(
    `${o.warm} Idle Ready pods`,
    () => {
      if (performance.now() - lastLog > 15_000) {
        lastLog = performance.now();
        ctx.say(`  ${view.idleTotal()}/${o.warm} Idle Ready, ${view.podsSeen.size} pods seen`);
      }
      return view.poolsHave((j) => plan[j]!.minIdle);
    },
    { timeoutMs: 1_800_000, intervalMs: 250 },
  );
  return { warmSeconds: (performance.now() - tw0) / 1000 };
}
