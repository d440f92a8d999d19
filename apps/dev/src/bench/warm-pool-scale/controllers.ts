// The controller as shipped, in processes of its own (one per shard, optionally in a memory cgroup):
// their RSS sampled, their /metrics scraped, their death said at once, and their stop.
import { waitFor } from '@claimkit/e2e/harness';
import type { BenchContext } from '../context.ts';
import { freePort, rssMb, spawnShippedController } from '../controller-process.ts';
import { connectProfiler, type PhaseProfiler } from '../inspector-profile.ts';
import { createMemoryCgroup, type MemoryCgroup } from '../memory-cgroup.ts';
import type { WarmPoolScaleOptions } from './options.ts';
import type { RunPlan } from './set-up.ts';

export interface Controllers {
  shards: number;
  ports: number[];
  pids: number[];
  /** The inspector port of shard 0, with --cpu-prof. */
  inspectPort: number | undefined;
  cgroup: MemoryCgroup | undefined;
  /** Why a controller exited mid-run, if one did. */
  died(): string | undefined;
  /** The largest process's RSS now (a container's limit applies to each shard's pod). */
  rssNow(): number;
  /** The largest RSS sampled so far (every 250 ms). */
  rssPeak(): number;
  /** Every shard's /metrics, one after the other: counters summed over lines add up over shards. */
  scrape(): Promise<string>;
  /** Stops sampling and saying deaths: what follows is the run's own stop. */
  stopWatching(): void;
  /** SIGTERM to each process still running, waiting for its exit; then the cgroup goes. */
  stop(): Promise<void>;
}

export async function startControllers(
  ctx: BenchContext,
  o: WarmPoolScaleOptions,
  run: RunPlan,
): Promise<Controllers> {
  const { say } = ctx;
  const shards = o.shards ?? 1;
  if (shards > 1 && o.memoryLimitBytes !== undefined)
    throw new Error('--memory-limit runs one controller in one cgroup: not with --shards');
  const ports: number[] = [];
  for (let i = 0; i < shards; i++) ports.push(await freePort());
  // The profile is shard 0's.
  const inspectPort = o.cpuProfDir ? await freePort() : undefined;
  // The controller's --namespace takes one namespace or none (all): several namespaces are
  // watched cluster-wide, the bench's being the only ones with claimkit objects.
  const cgroup =
    o.memoryLimitBytes === undefined
      ? undefined
      : createMemoryCgroup(o.memoryLimitBytes, `claimkit-bench-${process.pid}`);
  const children = ports.map((port, i) =>
    spawnShippedController({
      kubeconfig: ctx.kubeconfig,
      namespace: o.namespaces === 1 ? run.ns : undefined,
      port,
      nodeFlags: inspectPort && i === 0 ? [`--inspect=127.0.0.1:${inspectPort}`] : [],
      args: [
        '--concurrency',
        String(o.concurrency),
        ...(shards > 1 ? ['--shard', `${i}/${shards}`] : []),
        ...o.controllerArgs,
      ],
      ...(cgroup ? { cgroup } : {}),
    }),
  );
  const pids = children.map((c) => c.pid!);
  // A controller that dies mid-run (killed past its memory limit, a heap out of memory) is said at
  // once; the waits that follow then fail on what they waited for.
  let stopping = false;
  let died: string | undefined;
  for (const [i, child] of children.entries()) {
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const ooms = cgroup?.oomKills();
      died = `the controller${shards > 1 ? ` (shard ${i}/${shards})` : ''} exited mid-run (${signal ? `signal ${signal}` : `code ${code}`}${ooms ? `; its memory cgroup counted ${ooms} OOM kill(s)` : ''})`;
      say(died);
    });
  }
  const rssNow = () => Math.max(...pids.map((pid) => rssMb(pid)));
  let rssPeak = 0;
  const rssSampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssNow());
    } catch {
      // exited
    }
  }, 250);
  return {
    shards,
    ports,
    pids,
    inspectPort,
    cgroup,
    died: () => died,
    rssNow,
    rssPeak: () => rssPeak,
    scrape: async () =>
      (
        await Promise.all(ports.map(async (port) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()))
      ).join('\n'),
    stopWatching: () => {
      stopping = true;
      clearInterval(rssSampler);
    },
    stop: async () => {
      await Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null) return;
          child.kill('SIGTERM');
          await new Promise((r) => child.once('exit', r));
        }),
      );
      cgroup?.remove();
    },
  };
}

/** Waits until every shard is ready; then connects to shard 0's profiler, with --cpu-prof. */
export async function controllersReady(
  c: Controllers,
  say: (s: string) => void,
): Promise<PhaseProfiler | undefined> {
  for (const [i, port] of c.ports.entries())
    await waitFor(
      `controller${c.shards > 1 ? ` shard ${i}` : ''} ready`,
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok,
      { timeoutMs: 120_000, intervalMs: 100 },
    );
  if (!c.inspectPort) return undefined;
  return connectProfiler(c.inspectPort).catch((e: Error) => {
    say(`no CPU profile: ${e.message}`);
    return undefined;
  });
}
