// Settle: the warm-up's tail (kwok's last status updates, the scheduler's and the garbage
// collector's work on thousands of new pods, the pool's last status writes) must not land on the
// first steady claims. Wait until the control plane and the controller together stay under
// SETTLED_CORES over a 2 s window (at most 2 min), as a warm pool is before claims arrive.
import { componentPids, cpuBetween, snapshotCpu } from '../process-cpu.ts';
import { SETTLED_CORES, sleep } from './options.ts';

/** The processes whose CPU the run measures: the control plane's, the controller('s shards), the bench. */
export function cpuGroupsOf(pids: readonly number[]): Map<string, number[]> {
  return new Map([
    ...componentPids(),
    ['controller', [...pids]],
    ...(pids.length > 1 ? pids.map((pid, i): [string, number[]] => [`controller shard ${i}`, [pid]]) : []),
    ['bench client', [process.pid]],
  ]);
}

/** The cores the control plane and the controller used together (not the bench, nor a shard twice). */
export function settlingCores(usage: Record<string, { cores: number }>): number {
  return Object.entries(usage)
    .filter(([name]) => name !== 'bench client' && !name.startsWith('controller shard'))
    .reduce((a, [, u]) => a + u.cores, 0);
}

export async function settle(
  cpuGroups: Map<string, number[]>,
): Promise<{ settleSeconds: number; quietCores: number }> {
  const tq0 = performance.now();
  let quietCores = Number.NaN;
  for (let prev = snapshotCpu(cpuGroups); ; ) {
    await sleep(2000);
    const cur = snapshotCpu(cpuGroups);
    quietCores = settlingCores(cpuBetween(prev, cur, 2));
    prev = cur;
    if (quietCores < SETTLED_CORES || performance.now() - tq0 > 120_000) break;
  }
  return { settleSeconds: (performance.now() - tq0) / 1000, quietCores };
}
