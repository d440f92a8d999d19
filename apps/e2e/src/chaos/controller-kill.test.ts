// Chaos: the controller SIGKILLed mid-decision while claims churn, then started again (a new
// process); and two controllers at once without leader election. Each ends converged, with every
// invariant holding and doctor clean.
import { afterAll, describe, it } from 'vitest';
import { finalizeClaims, kube, until } from '../controller/helpers.ts';
import { e2eCluster, useTestNamespace } from '../harness/vitest.ts';
import { churn, expectConverged, killControllers, spawnController, stopChurns, warmPool } from './helpers.ts';

describe('chaos: controller processes', () => {
  const ns = useTestNamespace('chaos-ctl');
  afterAll(async () => {
    await stopChurns();
    await finalizeClaims(ns.name).catch(() => {});
    await killControllers();
  });

  it('a controller SIGKILLed during churn and started again converges', async () => {
    const c = kube();
    const kubeconfig = e2eCluster().kubeconfigPath;
    let ctl = await spawnController(ns.name, { kubeconfig, identity: 'chaos-a' });
    await c.create(warmPool(ns.name));
    const load = churn(ns.name);
    for (let kill = 0; kill < 3; kill++) {
      // Kill it while it is deciding: a few more claims made since the last start.
      const from = load.rounds;
      await until('claims churning', async () => load.rounds >= from + 4, 30_000);
      await ctl.kill('SIGKILL');
      ctl = await spawnController(ns.name, { kubeconfig, identity: `chaos-a${kill}` });
    }
    await load.stop();
    await expectConverged(ns.name, 'controller SIGKILL x3 during churn', Date.now());
  });

  it('two controllers without leader election converge', async () => {
    await killControllers();
    const kubeconfig = e2eCluster().kubeconfigPath;
    await Promise.all([
      spawnController(ns.name, { kubeconfig, identity: 'chaos-x' }),
      spawnController(ns.name, { kubeconfig, identity: 'chaos-y' }),
    ]);
    const load = churn(ns.name, { live: 8, periodMs: 100 });
    await until('40 churn rounds', async () => load.rounds >= 40, 60_000);
    await load.stop();
    await expectConverged(ns.name, 'two controllers without leader election', Date.now());
  });
});
