// Chaos on the control plane (local provider: it restarts components by their pid file): the API
// server SIGKILLed and started again, then etcd, while claims churn and a controller runs. The
// controller's /readyz goes 503 while the API server is gone (/healthz stays 200) and 200 once its
// informers have synced again; the cluster converges; every component is healthy before the file
// ends, because the next test files share this control plane.
import { afterAll, describe, expect, it } from 'vitest';
import { finalizeClaims, kube, until } from '../controller/helpers.ts';
import { restartComponent, startComponent, stopComponent, untilAllHealthy } from '../harness/index.ts';
import { e2eClients, e2eCluster, useTestNamespace } from '../harness/vitest.ts';
import {
  churn,
  expectConverged,
  killControllers,
  readyz,
  spawnController,
  stopChurns,
  warmPool,
} from './helpers.ts';

const stateDir = e2eCluster().stateDir;

describe.skipIf(!stateDir)('chaos: API server and etcd restarts (local provider)', () => {
  const ns = useTestNamespace('chaos-api');
  afterAll(async () => {
    // Whatever happened above, hand the next file a healthy control plane.
    if (stateDir) await untilAllHealthy(stateDir, 120_000);
    await until(
      'the fake nodes Ready',
      async () =>
        (await e2eClients().core.listNode({ labelSelector: 'type=kwok' })).items.every((n) =>
          n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        ),
      60_000,
    );
    await stopChurns();
    // The claims' finalizers need the controller: finish them before it stops, or the namespace
    // (deleted next) waits for them forever. A failure here is the file's, not the next one's.
    try {
      await finalizeClaims(ns.name, 60_000);
    } finally {
      await killControllers();
    }
  });

  it('the controller is unready while the API server is gone, and the cluster converges after it and etcd restart', async () => {
    const dir = stateDir!;
    const c = kube();
    const ctl = await spawnController(ns.name, {
      kubeconfig: e2eCluster().kubeconfigPath,
      identity: 'chaos-api',
    });
    await c.create(warmPool(ns.name));
    const load = churn(ns.name);
    await until('claims churning', async () => load.rounds >= 5, 30_000);

    await stopComponent(dir, 'kube-apiserver', { kill: true });
    await until(
      'controller /readyz 503 while the API server is gone',
      async () => (await readyz(ctl)) === 503,
      30_000,
    );
    const health = await fetch(`${ctl.health}/healthz`);
    expect(health.status).toBe(200);
    await startComponent(dir, 'kube-apiserver', { timeoutMs: 90_000 });
    const apiBack = Date.now();
    await until('controller /readyz 200 again', async () => (await readyz(ctl)) === 200, 60_000);
    process.stderr.write(
      `[chaos] controller ready ${((Date.now() - apiBack) / 1000).toFixed(1)}s after the API server\n`,
    );
    const from = load.rounds;
    await until('churn going on after the API server restart', async () => load.rounds >= from + 5, 60_000);
    // Doctor judges a settled namespace: a claim the churn just deleted still labels its pod.
    await load.stop();
    await expectConverged(ns.name, 'kube-apiserver SIGKILL + restart (churn on)', apiBack);
    const load2 = churn(ns.name);

    await restartComponent(dir, 'etcd', { kill: true, timeoutMs: 60_000 });
    const etcdBack = Date.now();
    await untilAllHealthy(dir, 90_000);
    await until('churn going on after the etcd restart', async () => load2.rounds >= 5, 60_000);
    await load2.stop();
    await until('controller /readyz 200 after etcd', async () => (await readyz(ctl)) === 200, 60_000);
    await expectConverged(ns.name, 'etcd SIGKILL + restart (churn on)', etcdBack);
  });
});
