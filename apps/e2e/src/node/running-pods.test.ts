// Claims on pods whose containers really run (the real node, our workload image): bind, release and
// recycle keep the running container; a container that exits or is OOM-killed under restartPolicy
// Always is restarted in place and the claim keeps its pod; under Never its pod finishes, the claim
// goes Lost and binds a fresh pod, and the finished pod is deleted; a drain of the node evicts through the
// real eviction API, which honours the pool's PodDisruptionBudget for Bound pods; the kubelet
// SIGKILLed and restarted leaves running pods and their claims alone; a NotReady node hands out no
// Idle pod. Every scenario ends with every invariant and a clean doctor.
import type { Pod, PodClaim, PodPool } from '@claimkit/core';
import { runDoctor } from '@claimkit/core/doctor';
import { ClaimWaitError, claimPod } from '@claimkit/kube';
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
import { PolicyV1Api, restartComponent, startComponent, stopComponent } from '../harness/index.ts';
import { describeOnRealNode, e2eClients, e2eCluster, useTestNamespace } from '../harness/vitest.ts';
import { killContainer, realPool, runningContainer } from './helpers.ts';

describeOnRealNode('claims on running containers (real node)', ['workload'], (node) => {
  const ns = useTestNamespace('running');
  let ctl: RunningController;
  const c = () => kube();

  const claim = (name: string, poolName: string) =>
    c().create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name, namespace: ns.name },
      spec: { poolName },
    } as PodClaim) as Promise<PodClaim>;
  const getClaim = async (name: string) =>
    (await getOrUndefined(c().get('PodClaim', { namespace: ns.name, name }))) as PodClaim | undefined;
  const getPod = async (name: string) =>
    (await getOrUndefined(c().get('Pod', { namespace: ns.name, name }))) as Pod | undefined;

  async function bound(name: string, timeoutMs = 90_000): Promise<{ claim: PodClaim; pod: Pod }> {
    let out: { claim: PodClaim; pod: Pod } | undefined;
    await until(
      `PodClaim ${name} Bound to a pod whose container runs`,
      async () => {
        const cl = await getClaim(name);
        if (cl?.status?.phase !== 'Bound' || !cl.status?.podName) return false;
        const pod = await getPod(cl.status?.podName);
        if (!pod || !runningContainer(pod)) return false;
        out = { claim: cl, pod };
        return true;
      },
      timeoutMs,
    );
    return out!;
  }

  /** kubectl cordon / uncordon (a JSON patch: client-node's patch default). */
  const cordon = (on: boolean) =>
    e2eClients().core.patchNode({
      name: node.name,
      body: [{ op: 'add', path: '/spec/unschedulable', value: on }],
    });

  async function clean(what: string) {
    await expectAllInvariants(ns.name, 60_000);
    const doctor = await runDoctor(c(), { namespace: ns.name, now: () => Date.now() });
    if (doctor.findings.length > 0)
      throw new Error(`${what}: doctor found ${JSON.stringify(doctor.findings, null, 2)}`);
  }

  beforeAll(async () => {
    ctl = await startController(ns.name);
  });
  afterAll(async () => {
    // Whatever a failed test left stopped comes back, so later files find the node as it was.
    await startComponent(e2eCluster().stateDir!, 'kubelet').catch(() => undefined);
    await cordon(false).catch(() => undefined);
    await finalizeClaims(ns.name, 60_000).catch(() => undefined);
    await ctl?.stop();
  }, 120_000);

  it('binds, releases and recycles a pod whose container keeps running', async () => {
    await c().create(realPool(ns.name, 'live', { minIdle: 2, maxPods: 6 }));
    await claim('a', 'live');
    const { claim: a, pod } = await bound('a');
    // The claim says where its pod is (status.address, written with the binding): the real pod's IP.
    expect(pod.status?.podIP).toBeTruthy();
    expect(a.status?.address?.podIPs).toEqual([pod.status?.podIP]);
    expect(a.status?.address?.hostIP).toBe(pod.status?.hostIP);
    const before = runningContainer(pod)!;
    await c().delete('PodClaim', { namespace: ns.name, name: 'a' });
    await until(`pod ${pod.metadata.name} recycled to Idle`, async () => {
      const p = await getPod(pod.metadata.name);
      return (
        p?.metadata.labels?.['claimkit.dev/state'] === 'Idle' &&
        !p.metadata.labels?.['claimkit.dev/claimed-by']
      );
    });
    const after = runningContainer((await getPod(pod.metadata.name))!);
    // Recycling is a label change: the same container kept running.
    expect(after?.id).toBe(before.id);
    await clean('recycle');
  }, 180_000);

  it('restartPolicy Always: a container that exits or is OOM-killed restarts in place; the claim keeps its pod', async () => {
    await claim('crash', 'live');
    const { pod } = await bound('crash');
    const first = runningContainer(pod)!;
    await killContainer(node, first.id);
    await until(`container of ${pod.metadata.name} restarted`, async () => {
      const p = await getPod(pod.metadata.name);
      const r = p && runningContainer(p);
      return r !== undefined && r.restartCount > first.restartCount && r.id !== first.id;
    });
    const cl = (await getClaim('crash'))!;
    expect(cl.status?.phase).toBe('Bound');
    expect(cl.status?.podName).toBe(pod.metadata.name);
    expect((await getPod(pod.metadata.name))?.metadata.uid).toBe(pod.metadata.uid);

    // OOM: a pool whose container outgrows its memory limit once, then sleeps.
    const oom = realPool(ns.name, 'oom', {
      minIdle: 1,
      maxPods: 2,
      command: [
        'sh',
        '-c',
        'if [ ! -e /tmp/grew ]; then touch /tmp/grew; x=$(head -c 200000000 /dev/zero | tr "\\0" a); fi; sleep 1000000',
      ],
    });
    const container = (oom.spec.template.spec as NonNullable<Pod['spec']>).containers[0] as Record<
      string,
      unknown
    >;
    container.resources = { limits: { memory: '32Mi' } };
    await c().create(oom);
    let oomPod: Pod | undefined;
    await until(
      'a pool pod OOM-killed once and running again',
      async () => {
        const pods = (await c().list('Pod', { namespace: ns.name, labelSelector: 'claimkit.dev/pool=oom' }))
          .items as Pod[];
        oomPod = pods.find((p) => {
          const s = (
            p.status as
              | { containerStatuses?: { lastState?: { terminated?: { reason?: string } } }[] }
              | undefined
          )?.containerStatuses?.[0];
          return s?.lastState?.terminated?.reason === 'OOMKilled' && runningContainer(p);
        });
        return oomPod !== undefined;
      },
      120_000,
    );
    await claim('after-oom', 'oom');
    const b = await bound('after-oom');
    expect(b.pod.metadata.name).toBe(oomPod!.metadata.name);
    await clean('container restarts');
  }, 300_000);

  it('restartPolicy Never: a container that exits ends its pod; the claim goes Lost and binds a fresh pod, the finished pod is deleted', async () => {
    await c().create(realPool(ns.name, 'once', { minIdle: 2, maxPods: 4, restartPolicy: 'Never' }));
    await claim('once-claim', 'once');
    const { pod } = await bound('once-claim');
    await killContainer(node, runningContainer(pod)!.id);
    await until(
      `claim once-claim off its finished pod ${pod.metadata.name}`,
      async () => (await getClaim('once-claim'))?.status?.podName !== pod.metadata.name,
      60_000,
    );
    const again = await bound('once-claim', 120_000);
    expect(again.pod.metadata.name).not.toBe(pod.metadata.name);
    expect(again.claim.status?.phase).toBe('Bound');
    await until(
      `finished pod ${pod.metadata.name} deleted`,
      async () => (await getPod(pod.metadata.name)) === undefined,
      60_000,
    );
    await clean('restartPolicy Never');
  }, 300_000);

  it('a drain evicts through the eviction API: Idle pods go, a Bound pod is kept by the pool PDB', async () => {
    const pool = realPool(ns.name, 'guarded', { minIdle: 1, maxPods: 4 });
    (pool.spec as PodPool['spec'] & { disruptionBudget?: { maxUnavailable: number } }).disruptionBudget = {
      maxUnavailable: 0,
    };
    await c().create(pool);
    await claim('guarded-claim', 'guarded');
    const { pod } = await bound('guarded-claim');
    const { core, kc } = e2eClients();
    await until('the pool PodDisruptionBudget counted by the disruption controller', async () => {
      const pdbs = await kc
        .makeApiClient(PolicyV1Api)
        .listNamespacedPodDisruptionBudget({ namespace: ns.name });
      // The disruption controller has counted the Bound pod: the eviction API decides by this.
      return pdbs.items.some(
        (p) => (p.status?.observedGeneration ?? 0) >= 1 && (p.status?.expectedPods ?? 0) >= 1,
      );
    });
    // kubectl drain: cordon, then evict every pod of the node (in this namespace).
    await cordon(true);
    const evict = (name: string) =>
      core
        .createNamespacedPodEviction({
          namespace: ns.name,
          name,
          body: { metadata: { name, namespace: ns.name } },
        })
        .then(
          () => 201,
          (e: { code?: number }) => e.code ?? 0,
        );
    expect(await evict(pod.metadata.name)).toBe(429);
    const idle = (
      (
        await c().list('Pod', {
          namespace: ns.name,
          labelSelector: 'claimkit.dev/pool=guarded,claimkit.dev/state=Idle',
        })
      ).items as Pod[]
    ).map((p) => p.metadata.name);
    for (const name of idle) expect([201, 404]).toContain(await evict(name));
    // The Bound pod and its claim stay; no Idle pod is handed out on a cordoned node.
    await claim('while-cordoned', 'guarded');
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await getClaim('while-cordoned'))?.status?.phase).not.toBe('Bound');
    expect((await getClaim('guarded-claim'))?.status?.podName).toBe(pod.metadata.name);
    await cordon(false);
    // Known slow (latency, not safety): the pool creates the evicted Idle pods' replacements only when
    // a pool expectation expires, 60 s after its first create (the debug log shows it reconciling at
    // once on the uncordon, then waiting); until that is found, the claim gets 180 s.
    await bound('while-cordoned', 180_000);
    await clean('drain');
  }, 300_000);

  it('the kubelet SIGKILLed and restarted: running pods and their claims survive', async () => {
    await claim('survivor', 'live');
    const { pod } = await bound('survivor');
    const before = runningContainer(pod)!;
    await restartComponent(e2eCluster().stateDir!, 'kubelet', { kill: true });
    await until('the real node Ready again', async () => {
      const n = await e2eClients().core.readNode({ name: node.name });
      return n.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false;
    });
    await new Promise((r) => setTimeout(r, 5_000));
    const p = (await getPod(pod.metadata.name))!;
    expect(p.metadata.uid).toBe(pod.metadata.uid);
    expect(runningContainer(p)?.id).toBe(before.id);
    expect((await getClaim('survivor'))?.status?.phase).toBe('Bound');
    await clean('kubelet restart');
  }, 180_000);

  it('a NotReady node hands out no Idle pod; once Ready again the claim binds', async () => {
    await stopComponent(e2eCluster().stateDir!, 'kubelet', { kill: true });
    await until(
      `node ${node.name} NotReady (node-lifecycle-controller's grace period)`,
      async () => {
        const n = await e2eClients().core.readNode({ name: node.name });
        return n.status?.conditions?.some((x) => x.type === 'Ready' && x.status !== 'True') ?? false;
      },
      120_000,
    );
    await claim('on-notready', 'live');
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await getClaim('on-notready'))?.status?.phase).not.toBe('Bound');
    await startComponent(e2eCluster().stateDir!, 'kubelet');
    await bound('on-notready', 120_000);
    await clean('node NotReady');
  }, 300_000);

  it('claimPod: one call claims a pod, waits for it and answers with an address that serves', async () => {
    // A pool whose container serves HTTP on the port its template declares (busybox httpd).
    const web = realPool(ns.name, 'http', {
      minIdle: 1,
      maxPods: 2,
      command: [
        'sh',
        '-c',
        'mkdir -p /www && echo "hello from $(hostname)" > /www/index.html && exec httpd -f -p 8080 -h /www',
      ],
    });
    const container = (web.spec.template.spec as NonNullable<Pod['spec']>).containers[0] as Record<
      string,
      unknown
    >;
    container.ports = [{ name: 'http', containerPort: 8080, protocol: 'TCP' }];
    await c().create(web);
    await until(
      'an Idle pod of pool http whose container runs',
      async () => {
        const pods = (
          await c().list('Pod', {
            namespace: ns.name,
            labelSelector: { matchLabels: { 'claimkit.dev/pool': 'http' } },
          })
        ).items;
        return pods.some((p) => p.metadata.labels?.['claimkit.dev/state'] === 'Idle' && runningContainer(p));
      },
      90_000,
    );
    const t0 = performance.now();
    const claimed = await claimPod(c(), { pool: 'http', namespace: ns.name, timeoutMs: 60_000 });
    const callMs = performance.now() - t0;
    expect(claimed.claim.status?.phase).toBe('Bound');
    expect(claimed.address.podIPs).toEqual([claimed.pod.status?.podIP]);
    expect(claimed.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    // The address is the running container's: the host reaches it over the node's pod network.
    const url = `http://${claimed.address.podIPs[0]}:${claimed.ports[0]!.containerPort}/`;
    let body = '';
    await until(`${url} answers`, async () => {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
      body = r?.ok ? await r.text() : '';
      return body !== '';
    });
    expect(body.trim()).toBe(`hello from ${claimed.pod.metadata.name}`);
    console.log(`claimPod on the real node: ${Math.round(callMs)} ms to a Bound claim with an address`);
    const lost: Array<string | undefined> = [];
    claimed.onLost((cl) => lost.push(cl?.status?.podName || 'no pod'));
    // The pod goes: the claim is Lost, and the caller is told.
    await c().delete(
      'Pod',
      { namespace: ns.name, name: claimed.pod.metadata.name },
      { gracePeriodSeconds: 0 },
    );
    await until(
      `the caller told that ${claimed.claim.metadata.name} lost its pod`,
      async () => lost.length > 0,
    );
    // Told once, with the claim no longer holding that pod.
    expect(lost).toHaveLength(1);
    expect(lost[0]).not.toBe(claimed.pod.metadata.name);
    await claimed.release();
    await until(
      `PodClaim ${claimed.claim.metadata.name} gone`,
      async () => !(await getClaim(claimed.claim.metadata.name)),
    );
    // No pod in time: the claim's own reason, the claim deleted.
    const none = await claimPod(c(), { pool: 'nothing-here', namespace: ns.name, timeoutMs: 3000 }).catch(
      (e: unknown) => e,
    );
    expect(none).toBeInstanceOf(ClaimWaitError);
    expect((none as ClaimWaitError).reason).toBe('PoolNotFound');
    await clean('claimPod');
  }, 240_000);
});
