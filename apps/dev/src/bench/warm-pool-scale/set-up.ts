// Set-up: the pools' plan, the controller built as shipped, and the run's namespaces.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { repoRoot } from '@claimkit/e2e/harness';
import { type BenchContext, benchNamespace, r1 } from '../context.ts';
import { type PoolPlan, planPools } from '../stats.ts';
import { type WarmPoolScaleOptions, warmPoolMaxPods } from './options.ts';

/** Kubernetes' scalability threshold: pods per namespace. */
const PODS_PER_NAMESPACE_THRESHOLD = 3000;

/** What every later phase works against: the pools, where they are, and where claim i goes. */
export interface RunPlan {
  maxPods: number;
  plan: PoolPlan[];
  /** The most pods any one namespace holds. */
  perNamespace: number;
  /** The load average before the run. */
  loadBefore: number[];
  namespaces: string[];
  /** The first namespace: the controller's when there is one, and the canary's. */
  ns: string;
  /** Claim i (steady s-i, burst b-i) goes to pool i % pools, in that pool's namespace. */
  poolOf(i: number): PoolPlan;
  nsOf(i: number): string;
}

/** A pool's key in the bench's view. */
export const poolKey = (namespace: string, pool: string) => `${namespace}/${pool}`;

/** The most pods the plan puts in any one namespace (every pool at its maxPods). */
export function mostPodsPerNamespace(plan: readonly PoolPlan[]): number {
  const podsPerNamespace = new Map<number, number>();
  for (const p of plan)
    podsPerNamespace.set(p.namespace, (podsPerNamespace.get(p.namespace) ?? 0) + p.maxPods);
  return Math.max(...podsPerNamespace.values());
}

export async function setUp(ctx: BenchContext, o: WarmPoolScaleOptions): Promise<RunPlan> {
  const { say } = ctx;
  const maxPods = warmPoolMaxPods(o);
  const plan = planPools(o);
  const perNamespace = mostPodsPerNamespace(plan);
  if (perNamespace > PODS_PER_NAMESPACE_THRESHOLD)
    say(
      `note: ${perNamespace} pods per namespace, over Kubernetes' threshold of ${PODS_PER_NAMESPACE_THRESHOLD}`,
    );
  const loadBefore = loadavg().map(r1);
  say('building the controller (run as shipped: dist/, with its image Node flags) ...');
  execFileSync('pnpm', ['turbo', 'run', 'build', '--filter=@claimkit/controller...'], {
    cwd: repoRoot,
    stdio: 'ignore',
  });
  const prefix = o.key === 'agent-sandbox' ? 'bench-as' : 'bench-wps';
  const namespaces: string[] = [];
  for (let i = 0; i < o.namespaces; i++)
    namespaces.push(await benchNamespace(ctx, o.namespaces === 1 ? prefix : `${prefix}-${i}`));
  const poolOf = (i: number) => plan[i % plan.length]!;
  return {
    maxPods,
    plan,
    perNamespace,
    loadBefore,
    namespaces,
    ns: namespaces[0]!,
    poolOf,
    nsOf: (i) => namespaces[poolOf(i).namespace]!,
  };
}
