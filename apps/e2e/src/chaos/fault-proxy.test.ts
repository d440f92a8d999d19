// Chaos between the controller and the API server: the controller (a child process) talks to the
// API server only through the fault proxy (harness/fault-proxy.ts), which answers a tenth of its
// requests 429/500/503, resets them, loses their answers or holds them past the controller's
// request timeout (then sends them on), and cuts most of its watches mid-stream. Claims, a claim
// set and migrations churn meanwhile. Then the faults stop: the cluster converges, every invariant
// holds, doctor finds nothing, and the controller is ready again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { finalizeClaims, kube, until } from '../controller/helpers.ts';
import { FAULTS, type FaultProxy, startFaultProxy } from '../harness/fault-proxy.ts';
import { e2eCluster, useTestNamespace } from '../harness/vitest.ts';
import {
  churn,
  expectConverged,
  killControllers,
  readyz,
  spawnController,
  stopChurns,
  warmPool,
} from './helpers.ts';

// Another seed replays another run: CLAIMKIT_CHAOS_SEED=n.
const seed = Number(process.env.CLAIMKIT_CHAOS_SEED ?? 14);

describe('chaos: a fault-injecting proxy between the controller and the API server', () => {
  const ns = useTestNamespace('chaos-proxy');
  const dir = mkdtempSync(join(tmpdir(), 'claimkit-chaos-proxy-'));
  let proxy: FaultProxy | undefined;
  afterAll(async () => {
    proxy?.setFaults(false);
    await stopChurns();
    await finalizeClaims(ns.name).catch(() => {});
    await killControllers();
    await proxy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the controller survives 10 % faulted requests and cut watches under churn, and converges after', async () => {
    const requestTimeoutMs = 3000;
    proxy = await startFaultProxy({
      upstreamKubeconfig: e2eCluster().kubeconfigPath,
      dir,
      // Faults start once the controller is up: a controller whose first list fails exits (by design).
      faults: false,
      plan: {
        seed,
        rate: 0.1,
        delayMs: requestTimeoutMs + 1500,
        watchCutRate: 0.8,
        watchCutAfterMs: [300, 5000],
      },
    });
    const ctl = await spawnController(ns.name, {
      kubeconfig: proxy.kubeconfigPath,
      identity: 'chaos-proxy',
      args: [`--request-timeout=${requestTimeoutMs}ms`],
    });
    await kube().create(warmPool(ns.name));
    proxy.setFaults(true);
    const faultsFrom = Date.now();
    const load = churn(ns.name, { claimSet: true, migrate: true });
    const counts = proxy.counts;
    // Long enough that every kind of fault hit the controller more than once.
    await until(
      'every fault injected at least twice, 5 watches cut, 40 churn rounds',
      async () => load.rounds >= 40 && counts.watchCuts >= 5 && FAULTS.every((f) => counts[f] >= 2),
      90_000,
    );
    proxy.setFaults(false);
    const faultsEnded = Date.now();
    await load.stop();
    const injected = FAULTS.reduce((n, f) => n + counts[f], 0);
    process.stderr.write(
      `[chaos] fault proxy (seed ${seed}): ${((faultsEnded - faultsFrom) / 1000).toFixed(1)}s of faults, ` +
        `${counts.passed + injected} requests, ${injected} faulted (${FAULTS.map((f) => `${f} ${counts[f]}`).join(', ')}), ` +
        `${counts.watchCuts} watches cut; ${load.rounds} churn rounds\n`,
    );
    expect(ctl.child.exitCode, `the controller exited:\n${ctl.output()}`).toBeNull();

    await expectConverged(ns.name, 'fault proxy (10 % faults, cut watches) during churn', faultsEnded);
    await until('controller /readyz 200', async () => (await readyz(ctl)) === 200, 60_000);
    expect(ctl.child.exitCode, `the controller exited:\n${ctl.output()}`).toBeNull();
  });
});
