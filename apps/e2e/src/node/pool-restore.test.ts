// Start warm from a capture, for real: the capture agent (the chart's DaemonSet) checkpoints a
// function's container through its kubelet and pushes the archive as a checkpoint OCI image to the
// run's registry (TLS, the run's CA); the fenced result names it by digest; a PodPool with
// spec.source starts every pod as a restored copy of the captured process: the real node's
// containerd 2.3 pulls the image and restores it through the kubelet's CreateContainer
// (enable_experimental_restore_via_create). The counter in each of five pods, restored at once from
// one capture, continues from the captured count (its next line names its own pod) instead of
// starting at 1; the pods are Ready and handed to claims. When restore cannot happen (the image is
// gone from the registry) the pool says so (SourceRestored=False, a Warning Event naming pod, node
// and the runtime's words), hands none of those pods out, and with onRestoreFailure: Cold starts
// cold pods instead.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { Pod, PodClaim, PodPool } from '@claimkit/core';
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
import { describeOnRealNode, e2eClients, useTestNamespace } from '../harness/vitest.ts';
import { describePod, type InstalledAgent, installCaptureAgent } from './capture-agent-install.ts';
import { counterPod, criuFaults, realPool, runningContainer } from './helpers.ts';

/**
 * Counts in memory and names the pod it runs in. /etc/hostname (the kubelet's bind mount) names the
 * new pod after a restore; `hostname` would not: CRIU restores the container's UTS namespace, so a
 * restored process keeps the captured pod's hostname.
 */
const COUNTER = 'n=0; while :; do n=$((n+1)); echo "$n $(cat /etc/hostname)"; sleep 1; done';

/** The `<n> <host>` lines of a container's log (as `kubectl logs` gives it), in order. */
function counted(log: string): { n: number; host: string }[] {
  return log
    .split('\n')
    .map((l) => /^(\d+) (\S+)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ n: Number(m[1]), host: m[2]! }));
}

describeOnRealNode(
  'a pool whose pods resume a captured process (real node)',
  ['controller', 'workload'],
  (node) => {
    const ns = useTestNamespace('restore');
    const c = () => kube();
    let agent: InstalledAgent;
    let ctl: RunningController;
    const restores =
      node.runtimeVersion.startsWith('containerd://') &&
      /^containerd:\/\/v?2\.[123]\./.test(node.runtimeVersion);

    beforeAll(async () => {
      agent = await installCaptureAgent(ns.name, node, { image: { path: 'claimkit-checkpoints' } });
      ctl = await startController(ns.name, { captureAgentTokenFile: agent.tokenFile });
    }, 300_000);
    afterAll(async () => {
      await finalizeClaims(ns.name, 60_000).catch(() => undefined);
      await ctl?.stop();
      await agent?.uninstall();
    });

    const pool = async (name: string) =>
      (await getOrUndefined(c().get('PodPool', { namespace: ns.name, name }))) as PodPool | undefined;
    const condition = (p: PodPool | undefined, type: string) =>
      p?.status?.conditions?.find((x) => x.type === type);
    const poolPods = async (name: string) =>
      (
        (await c().list('Pod', { namespace: ns.name, labelSelector: `claimkit.dev/pool=${name}` })) as {
          items: Pod[];
        }
      ).items.filter((p) => !p.metadata.deletionTimestamp);
    const ready = (p: Pod) =>
      p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false;
    const podLog = (name: string) =>
      e2eClients()
        .core.readNamespacedPodLog({ namespace: ns.name, name, container: 'main' })
        .catch(() => '');
    function seededPool(
      name: string,
      capture: string,
      o: { minIdle: number; maxPods: number; onRestoreFailure?: 'Wait' | 'Cold' },
    ) {
      const p = realPool(ns.name, name, {
        minIdle: o.minIdle,
        maxPods: o.maxPods,
        command: ['sh', '-c', COUNTER],
      });
      (p.spec as PodPool['spec']).source = {
        captureName: capture,
        ...(o.onRestoreFailure ? { onRestoreFailure: o.onRestoreFailure } : {}),
      };
      return p;
    }

    const testClaim = (namespace: string, name: string, poolName: string) =>
      ({
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        metadata: { name, namespace },
        spec: { poolName },
      }) as PodClaim;

    let captureRef = '';

    it('five pods restored at once from one capture continue its count, are Ready and are handed to claims', async () => {
      await counterPod(ns.name, 'fn-0', 'fn', { script: COUNTER });
      // Let it count a few, so a restored count cannot be mistaken for a fresh start.
      await until(
        'fn-0 has counted to 3',
        async () => ((counted(await podLog('fn-0')).at(-1)?.n ?? 0) >= 3 ? true : undefined),
        30_000,
      );
      await c().create(agent.httpCapture('fn', 'fn'));
      const cap = await agent.captured('fn');
      const result = cap.status!.result!;
      expect(result.token).toBe(cap.status!.epoch);
      const repo = `${agent.imageRepository}/${ns.name}-fn`;
      expect(result.ref).toMatch(new RegExp(`^image:${repo.replace(/[.]/g, '\\.')}@sha256:[0-9a-f]{64}$`));
      captureRef = result.ref;
      const image = result.ref.slice('image:'.length);

      await c().create(seededPool('warm', 'fn', { minIdle: 5, maxPods: 8 }));
      if (!restores) {
        // A runtime without restore via CreateContainer (containerd 2.4: CLAIMKIT_CONTAINERD_VERSION):
        // the captures work, the pool says that its pods cannot be restored and hands none out.
        const cond = await until(
          `pool warm SourceRestored=False (RestoreFailed) on ${node.runtimeVersion}`,
          async () => {
            const x = condition(await pool('warm'), 'SourceRestored');
            if (x?.reason !== 'RestoreFailed')
              throw new Error(
                `condition: ${JSON.stringify(x)}; pods: ${(await poolPods('warm')).map(describePod).join('; ')}`,
              );
            return x;
          },
          120_000,
        );
        expect(cond.message).toMatch(/CreateContainerError|RunContainerError|StartError/);
        expect((await poolPods('warm')).some(ready)).toBe(false);
        process.stderr.write(`[e2e] restore: ${node.runtimeVersion} cannot restore: ${cond.message}\n`);
        return;
      }
      const pods = await until(
        'five pods of pool warm Ready, each a restored copy of fn-0',
        async () => {
          const ps = await poolPods('warm');
          const seen = ps.map(describePod).join('; ') || 'none';
          if (ps.length < 5 || !ps.every((p) => ready(p) && runningContainer(p)))
            throw new Error(`pods: ${seen}`);
          return ps;
        },
        180_000,
      );
      const firstTime = Date.parse(pods.map((p) => p.metadata.creationTimestamp!).sort()[0]!);
      expect(
        Date.parse(
          pods
            .map((p) => p.metadata.creationTimestamp!)
            .sort()
            .at(-1)!,
        ) - firstTime,
      ).toBeLessThan(10_000);
      for (const p of pods) {
        expect(p.spec.containers[0]!.image).toBe(image);
        expect(p.metadata.annotations?.['claimkit.dev/source-ref']).toBe(result.ref);
        const own = await until(
          `pod ${p.metadata.name} counting as itself after its restore`,
          async () => {
            const lines = counted(await podLog(p.metadata.name));
            const mine = lines.filter((l) => l.host === p.metadata.name);
            if (mine.length < 2)
              throw new Error(
                `log: ${
                  lines
                    .map((l) => `${l.n} ${l.host}`)
                    .slice(-6)
                    .join(', ') || 'empty'
                }`,
              );
            return { lines, mine };
          },
          30_000,
        );
        // The restored process goes on from where fn-0 was when it was checkpointed (>= 3), one by
        // one; a cold start would print "1 <pod>".
        expect(
          own.mine[0]!.n,
          `${p.metadata.name}: ${JSON.stringify(own.lines.slice(-8))}`,
        ).toBeGreaterThanOrEqual(3);
        expect(own.mine[1]!.n).toBe(own.mine[0]!.n + 1);
        // The captured log comes along (containerd copies container.log): its last line is the one before.
        const before = own.lines.filter((l) => l.host === 'fn-0');
        if (before.length > 0) expect(before.at(-1)!.n).toBe(own.mine[0]!.n - 1);
      }

      // Restored pods are Idle pods like any other: claims bind them.
      for (const name of ['c1', 'c2']) await c().create(testClaim(ns.name, name, 'warm'));
      const bound = await until(
        'claims c1 and c2 Bound to restored pods',
        async () => {
          const cs = await Promise.all(
            ['c1', 'c2'].map(
              (n) => c().get('PodClaim', { namespace: ns.name, name: n }) as Promise<PodClaim>,
            ),
          );
          return cs.every((x) => x.status?.phase === 'Bound' && x.status?.podName) ? cs : undefined;
        },
        60_000,
      );
      const refill = await poolPods('warm');
      for (const cl of bound) {
        const p = refill.find((x) => x.metadata.name === cl.status?.podName);
        expect(p, `claim ${cl.metadata.name}'s pod ${cl.status?.podName}`).toBeDefined();
        expect(p!.spec.containers[0]!.image).toBe(image);
      }
      const restoredCond = condition(await pool('warm'), 'SourceRestored');
      expect(restoredCond).toMatchObject({ status: 'True', reason: 'Restored' });
      await expectAllInvariants(ns.name, 60_000);
    }, 300_000);

    it('CRIU refusing the restore: the pod is reported (StartError) and not handed out; once CRIU works it is restored', async () => {
      if (!restores || !captureRef) return;
      criuFaults.fail('claimkit e2e: restore refused');
      try {
        await c().create(seededPool('refused', 'fn', { minIdle: 1, maxPods: 1 }));
        await c().create(testClaim(ns.name, 'refused-1', 'refused'));
        const failed = await until(
          'pool refused SourceRestored=False (RestoreFailed) naming its pod',
          async () => {
            const cond = condition(await pool('refused'), 'SourceRestored');
            if (cond?.reason !== 'RestoreFailed')
              throw new Error(
                `condition: ${JSON.stringify(cond)}; pods: ${(await poolPods('refused')).map(describePod).join('; ')}`,
              );
            return cond;
          },
          120_000,
        );
        expect(failed.message).toMatch(
          new RegExp(
            `pod refused-\\w+ on node ${node.name}: (StartError|RunContainerError|CreateContainerError)`,
          ),
        );
        expect(failed.message).toMatch(/criu|restore/i);
        const claim = (await c().get('PodClaim', { namespace: ns.name, name: 'refused-1' })) as PodClaim;
        expect(claim.status?.podName ?? '').toBe('');
      } finally {
        criuFaults.clear();
      }
      // Wait (the default): the kubelet tries again, CRIU now restores, the claim binds the pod.
      const bound = await until(
        'claim refused-1 Bound once CRIU restores again',
        async () => {
          const x = (await c().get('PodClaim', { namespace: ns.name, name: 'refused-1' })) as PodClaim;
          if (x.status?.phase !== 'Bound')
            throw new Error(
              `claim ${x.status?.phase}; pods: ${(await poolPods('refused')).map(describePod).join('; ')}`,
            );
          return x;
        },
        180_000,
      );
      const first = await until(
        `pod ${bound.status?.podName} counting as itself after its restore`,
        async () =>
          counted(await podLog(bound.status!.podName!)).find((l) => l.host === bound.status?.podName),
        30_000,
      );
      expect(first.n).toBeGreaterThanOrEqual(3);
      expect(condition(await pool('refused'), 'SourceRestored')?.reason).toBe('Restored');
    }, 300_000);

    it('an image that cannot be pulled: reported with pod, node and the runtime error, never handed out; Cold starts cold pods', async () => {
      if (!restores) return;
      // A second capture of the same function, whose image is then deleted from the registry.
      await c().create(agent.httpCapture('gone', 'fn'));
      const cap = await agent.captured('gone');
      const ref = cap.status!.result!.ref;
      expect(ref).not.toBe(captureRef);
      const m = /^image:([^/]+)\/(.+)@(sha256:[0-9a-f]{64})$/.exec(ref)!;
      const del = await fetchWithCa(
        `https://${m[1]}/v2/${m[2]}/manifests/${m[3]}`,
        'DELETE',
        node.registry.caFile,
      );
      expect(del, 'DELETE of the manifest in the registry').toBe(202);

      await c().create(seededPool('broken', 'gone', { minIdle: 2, maxPods: 3 }));
      await c().create(testClaim(ns.name, 'waits', 'broken'));
      const failed = await until(
        'pool broken SourceRestored=False (RestoreFailed) naming each of its pods',
        async () => {
          const p = await pool('broken');
          const cond = condition(p, 'SourceRestored');
          const pods = await poolPods('broken');
          const named = pods.filter((x) => cond?.message?.includes(`pod ${x.metadata.name} on node`));
          if (cond?.reason !== 'RestoreFailed' || pods.length < 2 || named.length !== pods.length)
            throw new Error(`condition: ${JSON.stringify(cond)}; pods: ${pods.map(describePod).join('; ')}`);
          return cond;
        },
        120_000,
      );
      expect(failed.status).toBe('False');
      expect(failed.message).toMatch(
        new RegExp(`pod broken-\\w+ on node ${node.name}: (ErrImagePull|ImagePullBackOff)`),
      );
      expect(failed.message).toMatch(/NotFound|not found/);
      const events = await until(
        'Warning Events RestoreFailed on pool broken',
        async () => {
          const list = await e2eClients().core.listNamespacedEvent({ namespace: ns.name });
          const evs = list.items.filter(
            (e) => e.reason === 'RestoreFailed' && e.involvedObject.name === 'broken',
          );
          return evs.length >= 2 ? evs : undefined;
        },
        60_000,
      );
      for (const e of events) {
        expect(e.type).toBe('Warning');
        expect(e.message).toContain(`on node ${node.name}`);
      }
      // Wait (the default): the pods stay, not Ready, and the claim is not given one.
      const waiting = (await c().get('PodClaim', { namespace: ns.name, name: 'waits' })) as PodClaim;
      expect(waiting.status?.podName ?? '').toBe('');
      expect((await poolPods('broken')).some(ready)).toBe(false);

      // Cold: the failed pods go, cold ones (the template's image) take their place and serve.
      await c().patch(
        'PodPool',
        { namespace: ns.name, name: 'broken' },
        { spec: { source: { captureName: 'gone', onRestoreFailure: 'Cold' } } },
      );
      const claim = await until(
        'claim waits Bound to a cold pod of pool broken',
        async () => {
          const x = (await c().get('PodClaim', { namespace: ns.name, name: 'waits' })) as PodClaim;
          return x.status?.phase === 'Bound' ? x : undefined;
        },
        120_000,
      );
      const cold = (await c().get('Pod', { namespace: ns.name, name: claim.status!.podName! })) as Pod;
      expect(cold.spec.containers[0]!.image).not.toBe(ref.slice('image:'.length));
      expect(cold.metadata.annotations?.['claimkit.dev/source-ref']).toBe(ref);
      const fresh = await until(
        `cold pod ${cold.metadata.name} counting from 1`,
        async () => {
          const lines = counted(await podLog(cold.metadata.name));
          return lines.length > 0 ? lines : undefined;
        },
        30_000,
      );
      expect(fresh[0]).toEqual({ n: 1, host: cold.metadata.name });
      // The result is remembered as one whose pods start cold.
      const after = await until(
        'pool broken SourceRestored=False (StartingCold), status.coldStartRef the result',
        async () => {
          const p = await pool('broken');
          return condition(p, 'SourceRestored')?.reason === 'StartingCold' ? p : undefined;
        },
        60_000,
      );
      expect(after.status?.coldStartRef).toBe(ref);
      await expectAllInvariants(ns.name, 60_000);
    }, 300_000);
  },
);

/** An HTTPS request with the run's CA; resolves to the status. */
async function fetchWithCa(url: string, method: string, caFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, ca: readFileSync(caFile), timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timeout`)));
    req.on('error', reject);
    req.end();
  });
}
