// Start warm from a capture: what a restore gains, on the real node (containerd 2.3 with restore via
// CreateContainer, the run's registry). A function that needs a slow warm-up before it is Ready
// (WARMUP_SECONDS one-second steps computing state it keeps in memory, then a file its readiness
// probe reads) is captured once by the reference capture agent (in this process, as the agent code
// runs in its DaemonSet: kubelet checkpoint, then a checkpoint OCI image pushed to the registry);
// then the time from a claim created to it Bound to a Ready pod that holds the state, three ways:
//   cold       a pool without a source, minIdle 0: the pod is created for the claim and warms up;
//   restored   a pool with spec.source, minIdle 0: the pod is created for the claim and restored;
//   idle       a pool with spec.source and Idle pods already restored: a bind.
// Also each restored pod's own time (its creation to Ready, seen by a watch), the image's size and
// the machine's CPU per pod start (every process: kubelet, containerd, CRIU, the control plane).

import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { CaptureAgent, controllerDefaults, createKubeController } from '@claimkit/controller';
import type { Capture, Pod, PodClaim, PodPool } from '@claimkit/core';
import { podNameOf } from '@claimkit/core';
import { type RealNode, realNodePlacement, testPool, WORKLOAD_IMAGE, waitFor } from '@claimkit/e2e/harness';
import { type BenchContext, benchNamespace, cleanup, summary } from './context.ts';

export const WARMUP_SECONDS = 20;

/** The function: warms up (state in memory), marks itself ready, then serves (prints its state). */
export function warmupScript(seconds: number): string {
  return [
    `s=0; i=0; while [ $i -lt ${seconds} ]; do i=$((i+1)); s=$((s + i*i)); sleep 1; done`,
    'echo "warm: state $s"; touch /tmp/ready',
    // /etc/hostname names the pod it runs in (a restored process keeps the captured UTS hostname).
    'n=0; while :; do n=$((n+1)); echo "$n $s $(cat /etc/hostname)"; sleep 1; done',
  ].join('; ');
}
/** The state the warm-up computes: the sum of i*i for i = 1..seconds. */
export const warmState = (seconds: number) => (seconds * (seconds + 1) * (2 * seconds + 1)) / 6;

export interface WarmStartOptions {
  /** Claims served by an on-demand restore (the first one pulls the image). */
  restores: number;
  /** Claims served by a cold pod (each takes the warm-up). */
  coldTrials: number;
  /** Claims served by an Idle restored pod. */
  idleTrials: number;
  warmupSeconds?: number;
  /** A file the controller's token for the agent is written to. */
  workDir: string;
}

/** /proc/stat's busy jiffies (all CPUs): user + nice + system + irq + softirq + steal. */
function busySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return (user + nice + system + irq + softirq + (steal ?? 0)) / 100;
}

/** GET over HTTPS with the registry's CA; the parsed JSON. */
function getJson(url: string, caFile: string, accept: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: readFileSync(caFile), headers: { accept }, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        body += d;
      });
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(JSON.parse(body))
          : reject(new Error(`GET ${url}: ${res.statusCode} ${body}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.on('error', reject);
    req.end();
  });
}

export async function benchWarmStart(ctx: BenchContext, node: RealNode, o: WarmStartOptions) {
  const { kube, admin, say } = ctx;
  const seconds = o.warmupSeconds ?? WARMUP_SECONDS;
  const state = warmState(seconds);
  const ns = await benchNamespace(ctx, 'bench-warm');
  // The agent calls the kubelet with a ServiceAccount token (nodes/checkpoint, nodes/pods).
  await admin.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'agent' } } });
  await admin.rbac.createClusterRoleBinding({
    body: {
      metadata: { name: `${ns}-agent` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'agent', namespace: ns }],
    },
  });
  const token = await admin.core.createNamespacedServiceAccountToken({
    namespace: ns,
    name: 'agent',
    body: { spec: { expirationSeconds: 3600 } },
  });
  const tokenFile = join(o.workDir, 'agent-token');
  writeFileSync(tokenFile, token.status?.token ?? '');
  const repository = `${node.registry.host}/claimkit-bench`;
  const agent = new CaptureAgent({
    kubelet: {
      host: node.ip,
      port: node.kubeletPort,
      tokenFile,
      insecureTLS: true,
      checkpointDir: node.checkpointDir,
      storeDir: join(o.workDir, 'archives'),
      nodeName: node.name,
      image: { repository, caFile: node.registry.caFile },
    },
  });
  const { port } = await agent.listen(0, '127.0.0.1');
  const ctl = createKubeController({
    config: { ...controllerDefaults(), kubeconfig: ctx.kubeconfig, namespace: ns },
  });
  await ctl.manager.start();

  // Every pod's creation and Ready, as a watch sees them (ms, not the API's seconds).
  const seen = new Map<string, { created: number; ready?: number }>();
  const stopPods = kube.watch(
    'Pod',
    { namespace: ns },
    {
      onEvent: (e) => {
        const name = e.object.metadata.name;
        const at = performance.now();
        if (!seen.has(name)) seen.set(name, { created: at });
        const s = seen.get(name)!;
        if (
          s.ready === undefined &&
          e.object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        )
          s.ready = at;
      },
    },
  );
  const template = (name: string, minIdle: number, source?: string): PodPool => {
    const p = testPool(ns, name, { minIdle, maxPods: Math.max(minIdle, 1) + 2, image: WORKLOAD_IMAGE });
    p.spec.releasePolicy = 'Delete';
    const spec = p.spec.template.spec as Record<string, unknown> & { containers: Record<string, unknown>[] };
    Object.assign(spec, realNodePlacement(), { terminationGracePeriodSeconds: 1 });
    Object.assign(spec.containers[0]!, {
      imagePullPolicy: 'Never',
      command: ['sh', '-c', warmupScript(seconds)],
      readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1, failureThreshold: 1 },
    });
    if (source) p.spec.source = { captureName: source };
    return p;
  };
  const podLog = (name: string) =>
    admin.core.readNamespacedPodLog({ namespace: ns, name, container: 'main' }).catch(() => '');
  /** The pod holds the warm state and serves as itself. */
  const holdsState = (name: string) =>
    waitFor(
      `pod ${name} serving with state ${state}`,
      async () => (new RegExp(`^\\d+ ${state} ${name}$`, 'm').test(await podLog(name)) ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 200 },
    );

  /** One claim on `pool`: created, Bound (polled every 20 ms); ms and the pod's name. */
  async function claimOnce(pool: string, name: string): Promise<{ ms: number; pod: string }> {
    const t0 = performance.now();
    await kube.create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: { name, namespace: ns },
      spec: { poolName: pool },
    } as PodClaim);
    const claim = await waitFor(
      `claim ${name} Bound (pool ${pool})`,
      async () => {
        const c = await kube.get('PodClaim', { namespace: ns, name });
        return c.status?.phase === 'Bound' && podNameOf(c) ? c : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 20 },
    );
    const ms = performance.now() - t0;
    await holdsState(podNameOf(claim)!);
    return { ms, pod: podNameOf(claim)! };
  }
  const release = async (name: string) => {
    await kube.delete('PodClaim', { namespace: ns, name });
    await waitFor(
      `claim ${name} gone`,
      async () =>
        await kube.get('PodClaim', { namespace: ns, name }).then(
          () => undefined,
          () => true,
        ),
      {
        timeoutMs: 60_000,
        intervalMs: 50,
      },
    );
  };

  try {
    // The function, warmed up once, and its capture.
    say(`warm-start: the function warms up (${seconds} s) ...`);
    await kube.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'fn-0', namespace: ns, labels: { app: 'fn' } },
      spec: {
        ...realNodePlacement(),
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image: WORKLOAD_IMAGE,
            imagePullPolicy: 'Never',
            command: ['sh', '-c', warmupScript(seconds)],
            readinessProbe: {
              exec: { command: ['cat', '/tmp/ready'] },
              periodSeconds: 1,
              failureThreshold: 1,
            },
          },
        ],
      },
    } as Pod);
    await waitFor(
      'fn-0 Ready',
      async () =>
        (await kube.get('Pod', { namespace: ns, name: 'fn-0' })).status?.conditions?.some(
          (c) => c.type === 'Ready' && c.status === 'True',
        ) || undefined,
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    const c0 = performance.now();
    await kube.create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name: 'fn', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'fn' } },
        container: 'main',
        leaseSeconds: 300,
        timeoutSeconds: 120,
        maxAttempts: 1,
        backend: { type: 'Http', url: `http://127.0.0.1:${port}/v1/captures` },
      },
    } as Capture);
    const cap = await waitFor(
      'Capture fn Captured',
      async () => {
        const c = await kube.get('Capture', { namespace: ns, name: 'fn' });
        if (c.status?.phase === 'Failed') throw new Error(`Capture fn Failed: ${JSON.stringify(c.status)}`);
        return c.status?.phase === 'Captured' ? c : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    const captureMs = performance.now() - c0;
    const ref = cap.status!.result!.ref;
    const m = /^image:([^/]+)\/(.+)@(sha256:[0-9a-f]{64})$/.exec(ref);
    if (!m) throw new Error(`the capture's ref is not a checkpoint image: ${ref}`);
    const manifest = (await getJson(
      `https://${m[1]}/v2/${m[2]}/manifests/${m[3]}`,
      node.registry.caFile,
      'application/vnd.oci.image.manifest.v1+json',
    )) as { layers: { size: number }[]; config: { size: number } };
    const imageBytes = manifest.layers.reduce((a, l) => a + l.size, 0) + manifest.config.size;
    say(`warm-start: captured in ${Math.round(captureMs)} ms: ${ref} (${(imageBytes / 1e6).toFixed(1)} MB)`);

    // The machine's own background (control plane, kubelet, controller, probes): busy CPU per second
    // with nothing starting, subtracted from each phase below.
    const idle0 = busySeconds();
    const idleT0 = performance.now();
    await new Promise((r) => setTimeout(r, 10_000));
    const backgroundPerSecond = (busySeconds() - idle0) / ((performance.now() - idleT0) / 1000);
    /** CPU-seconds per pod over a phase, gross and without the background. */
    const perPod = (busy: number, ms: number, n: number) => ({
      gross: Math.round((busy / n) * 100) / 100,
      net: Math.round((Math.max(0, busy - (backgroundPerSecond * ms) / 1000) / n) * 100) / 100,
    });

    // Cold, on demand.
    await kube.create(template('cold', 0));
    const cold: number[] = [];
    const cpu0 = busySeconds();
    const coldT0 = performance.now();
    for (let i = 0; i < o.coldTrials; i++) {
      const r = await claimOnce('cold', `cold-${i}`);
      cold.push(r.ms);
      await release(`cold-${i}`);
    }
    const coldCpu = perPod(busySeconds() - cpu0, performance.now() - coldT0, Math.max(1, o.coldTrials));
    say(`warm-start: cold on demand ${cold.map((x) => Math.round(x)).join(', ')} ms`);

    // Restored, on demand (the first pulls the image).
    await kube.create(template('ondemand', 0, 'fn'));
    const restored: number[] = [];
    const restoredPods: string[] = [];
    let firstPull = 0;
    const cpu1 = busySeconds();
    const restoreT0 = performance.now();
    for (let i = 0; i < o.restores; i++) {
      const r = await claimOnce('ondemand', `rs-${i}`);
      if (i === 0) firstPull = r.ms;
      else restored.push(r.ms);
      restoredPods.push(r.pod);
      await release(`rs-${i}`);
    }
    const restoreCpu = perPod(busySeconds() - cpu1, performance.now() - restoreT0, Math.max(1, o.restores));
    say(`warm-start: restored on demand ${[firstPull, ...restored].map((x) => Math.round(x)).join(', ')} ms`);

    // Idle restored pods, handed out.
    const idleCount = 3;
    await kube.create(template('idle', idleCount, 'fn'));
    await waitFor(
      `${idleCount} Idle restored pods Ready`,
      async () => {
        const pods = (await kube.list('Pod', { namespace: ns, labelSelector: 'claimkit.dev/pool=idle' }))
          .items;
        return pods.filter((p) =>
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        ).length >= idleCount
          ? true
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    const idle: number[] = [];
    for (let i = 0; i < o.idleTrials; i++) {
      // The refill restores in the background: wait for a full buffer before each claim.
      await waitFor(
        'the idle pool refilled',
        async () => {
          const pods = (
            await kube.list('Pod', {
              namespace: ns,
              labelSelector: 'claimkit.dev/pool=idle,claimkit.dev/state=Idle',
            })
          ).items;
          return pods.filter((p) =>
            p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          ).length >= idleCount
            ? true
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 100 },
      );
      idle.push((await claimOnce('idle', `idle-${i}`)).ms);
      await release(`idle-${i}`);
    }
    say(`warm-start: Idle restored ${idle.map((x) => Math.round(x)).join(', ')} ms`);

    // Each restored pod's own time: created -> Ready (scheduling, sandbox, pull if any, restore, probe).
    const restoreOwn = restoredPods
      .slice(1)
      .map((n) => seen.get(n))
      .filter((s): s is { created: number; ready: number } => s?.ready !== undefined)
      .map((s) => s.ready - s.created);
    return {
      warmupSeconds: seconds,
      image: { ref, bytes: imageBytes, captureMs: Math.round(captureMs) },
      claimToBoundMs: {
        cold: summary(cold),
        restoredOnDemand: summary(restored),
        restoredOnDemandFirstPull: Math.round(firstPull),
        idleRestored: summary(idle),
      },
      restoredPodCreatedToReadyMs: summary(restoreOwn),
      // Every process of the machine, per claim served on demand (pod created, started or restored,
      // probed, bound, deleted); net: less the background measured over 10 s with nothing starting.
      machineCpuSecondsPerPod: {
        backgroundCoresBusy: Math.round(backgroundPerSecond * 100) / 100,
        cold: coldCpu,
        restored: restoreCpu,
      },
    };
  } finally {
    stopPods();
    await ctl.manager.stop();
    await agent.close();
    await cleanup(ctx, ns);
    await admin.rbac.deleteClusterRoleBinding({ name: `${ns}-agent` }).catch(() => {});
  }
}
