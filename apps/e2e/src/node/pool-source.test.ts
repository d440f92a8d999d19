// Start warm from a capture, on the real node: a PodPool whose spec.source names a Capture creates
// no pod until that Capture holds a fenced result (SourceReady=False, NotCaptured), then creates
// pods that carry the result (annotations claimkit.dev/source-*, env CLAIMKIT_SOURCE_REF/TOKEN)
// and run with it. The result is a real checkpoint (Kubelet backend). containerd 2.4 cannot restore
// a container from it through CRI (see packages/controller/README.md, "Starting a pool's pods from
// a Capture"), so the pods receive the ref, which their app can start from; the archive itself is
// restored with runc + CRIU in capture-kubelet.test.ts. An unfenced result never reaches a pool:
// the CRD refuses it on the API server (controller/unfenced-result.test.ts) and the pool's own
// check refuses it where it got in anyway (core reconcile/pool-source.test.ts, the simulator's S1).
import type { Capture, Pod, PodPool } from '@claimkit/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  expectAllInvariants,
  finalizeClaims,
  getOrUndefined,
  kube,
  type RunningController,
  startController,
  until,
} from '../controller/helpers.ts';
import { realNodePlacement, WORKLOAD_IMAGE } from '../harness/index.ts';
import { describeOnRealNode, e2eClients, useTestNamespace } from '../harness/vitest.ts';
import { realPool, runningContainer } from './helpers.ts';

describeOnRealNode('a pool started from a fenced capture (real node)', ['workload'], () => {
  const ns = useTestNamespace('warm');
  const c = () => kube();
  let ctl: RunningController;
  beforeAll(async () => {
    ctl = await startController(ns.name);
  });
  afterAll(async () => {
    await finalizeClaims(ns.name, 60_000).catch(() => undefined);
    await ctl?.stop();
  });

  const condition = (p: PodPool | undefined, type: string) =>
    p?.status?.conditions?.find((x) => x.type === type);
  const poolPods = async () =>
    (
      (await c().list('Pod', { namespace: ns.name, labelSelector: 'claimkit.dev/pool=warm' })) as {
        items: Pod[];
      }
    ).items;

  it('creates no pod before the Capture is fenced, then pods that carry its result and run with it', async () => {
    await c().create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name: 'fn', namespace: ns.name },
      spec: {
        selector: { matchLabels: { app: 'fn' } },
        container: 'main',
        leaseSeconds: 300,
        timeoutSeconds: 120,
        maxAttempts: 3,
        backend: { type: 'Kubelet' },
      },
    } as Capture);
    const pool = realPool(ns.name, 'warm', {
      minIdle: 2,
      maxPods: 4,
      // The app receives the capture's ref (what it would restore from) and says so.
      command: [
        'sh',
        '-c',
        'echo "warm from $CLAIMKIT_SOURCE_REF (token $CLAIMKIT_SOURCE_TOKEN)"; exec ticker',
      ],
    });
    (pool.spec as PodPool['spec'] & { source?: { captureName: string } }).source = { captureName: 'fn' };
    await c().create(pool);

    // No holder pod yet: the Capture has no result, so the pool waits and says why.
    const waiting = await until(
      'PodPool warm SourceReady=False (NotCaptured)',
      async () => {
        const p = (await getOrUndefined(c().get('PodPool', { namespace: ns.name, name: 'warm' }))) as
          | PodPool
          | undefined;
        const s = condition(p, 'SourceReady');
        return s?.status === 'False' && s.reason === 'NotCaptured' ? p : undefined;
      },
      60_000,
    );
    expect(condition(waiting, 'SourceReady')?.message).toMatch(/fn/);
    expect(await poolPods()).toEqual([]);

    // The function's pod: the Capture checkpoints it for real and closes with a fenced result.
    await c().create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'fn-0', namespace: ns.name, labels: { app: 'fn' } },
      spec: {
        ...realNodePlacement(),
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'main', image: WORKLOAD_IMAGE, imagePullPolicy: 'Never', command: ['ticker'] }],
      },
    } as Pod);
    const cap = await until(
      'Capture fn Captured',
      async () => {
        const x = (await c().get('Capture', { namespace: ns.name, name: 'fn' })) as Capture;
        if (x.status?.phase === 'Failed') throw new Error(`Capture fn Failed: ${JSON.stringify(x.status)}`);
        return x.status?.phase === 'Captured' ? x : undefined;
      },
      120_000,
    );
    const result = cap.status!.result!;
    expect(result.token).toBe(cap.status!.epoch);
    expect(result.ref).toMatch(/^checkpoint:\/\/claimkit-node-0\//);

    const pods = await until(
      'two pool pods running, seeded from the fenced result',
      async () => {
        const ps = await poolPods();
        return ps.length >= 2 && ps.every((p) => runningContainer(p)) ? ps : undefined;
      },
      120_000,
    );
    for (const p of pods) {
      expect(p.metadata.annotations).toMatchObject({
        'claimkit.dev/source-capture': 'fn',
        'claimkit.dev/source-ref': result.ref,
        'claimkit.dev/source-token': String(result.token),
      });
      const env = p.spec.containers[0]!.env ?? [];
      expect(env).toEqual(
        expect.arrayContaining([
          { name: 'CLAIMKIT_SOURCE_REF', value: result.ref },
          { name: 'CLAIMKIT_SOURCE_TOKEN', value: String(result.token) },
        ]),
      );
      const log = await until(
        `pod ${p.metadata.name} logging the ref it starts from`,
        async () => {
          const text = await e2eClients()
            .core.readNamespacedPodLog({ namespace: ns.name, name: p.metadata.name, container: 'main' })
            .catch(() => '');
          return text.includes('warm from') ? text : undefined;
        },
        30_000,
      );
      expect(log).toContain(`warm from ${result.ref} (token ${result.token})`);
    }
    const ready = await until(
      'PodPool warm SourceReady=True (Fenced)',
      async () => {
        const p = (await c().get('PodPool', { namespace: ns.name, name: 'warm' })) as PodPool;
        return condition(p, 'SourceReady')?.status === 'True' ? p : undefined;
      },
      30_000,
    );
    expect(condition(ready, 'SourceReady')?.reason).toBe('Fenced');
    await expectAllInvariants(ns.name, 60_000);
  });
});
