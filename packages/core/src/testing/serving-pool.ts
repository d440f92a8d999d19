// A world for tests of the claim call (and its CLI): pool `web` with Ready Idle pods that have an
// IP and a declared port, FakeTimers for the caller's waits, and the controller's part played by
// the reconcilers once the caller's claims exist.
import type { PodClaim } from '../api/types.ts';
import { reconcilePodClaim } from '../reconcile/podclaim/index.ts';
import { reconcilePodPool } from '../reconcile/podpool/index.ts';
import { FakeTimers } from './fake-timers.ts';
import {
  idle,
  inNamespace,
  inPool,
  node,
  onNode,
  pod,
  podPool,
  podStatus,
  ready,
  withMaxPods,
  withMinIdle,
} from './fixtures.ts';
import { put } from './model-helpers.ts';
import { world } from './world.ts';

/**
 * The runtime's own timer, for letting a caller's real awaits (a create, a dynamic import) run: core
 * declares no host globals, every runtime has this one.
 */
const hostSleep = (ms: number) =>
  new Promise<void>((r) =>
    (globalThis as unknown as { setTimeout(fn: () => void, ms: number): unknown }).setTimeout(r, ms),
  );

export interface ServingPoolOptions {
  /** Ready Idle pods `web-0`.. with IPs 10.0.0.1.. (default 1). */
  idlePods?: number;
  maxPods?: number;
  /** Default 0: the pool keeps no warm buffer of its own (it may scale Idle pods down). */
  minIdle?: number;
  namespace?: string;
  /** The port the pods' container declares (default 8080, named http). */
  port?: number;
}

export async function servingPoolWorld(o: ServingPoolOptions = {}) {
  const namespace = o.namespace ?? 'default';
  const w = world();
  const ns = inNamespace(namespace);
  await put(w.model, podPool('web', ns, withMinIdle(o.minIdle ?? 0), withMaxPods(o.maxPods ?? 4)));
  await put(w.model, node('n1'));
  for (let i = 0; i < (o.idlePods ?? 1); i++)
    await put(
      w.model,
      pod(
        `web-${i}`,
        ns,
        inPool('web'),
        idle(),
        ready(),
        onNode('n1'),
        (p) => {
          p.spec.containers = [
            { name: 'main', image: 'web:1', ports: [{ name: 'http', containerPort: o.port ?? 8080 }] },
          ];
        },
        podStatus({ podIP: `10.0.0.${i + 1}`, podIPs: [{ ip: `10.0.0.${i + 1}` }], hostIP: '192.168.0.1' }),
      ),
    );
  const timers = new FakeTimers(w.clock.now());
  const claims = () => w.model.peek('PodClaim') as PodClaim[];
  const key = (name: string) => ({ namespace, name });
  /** The controller's part, once `claimsMade` claims exist (a caller creates its own a little later). */
  const control = async (claimsMade = 1) => {
    for (let i = 0; i < 200 && claims().length < claimsMade; i++) await hostSleep(5);
    for (let i = 0; i < 4; i++) {
      for (const c of claims()) await reconcilePodClaim(w.deps, key(c.metadata.name));
      await reconcilePodPool(w.deps, key('web'));
      w.model.completePodDeletions();
    }
  };
  /** Lets the caller's create and watch run. */
  const tick = () => hostSleep(0);
  return { w, timers, claims, control, tick, key };
}
