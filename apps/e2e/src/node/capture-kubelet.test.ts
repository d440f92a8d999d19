// Captures that really checkpoint: a Capture with `backend.type: Kubelet` on pods of the real node.
// The controller's POST /checkpoint/... goes through the API server's node proxy to the kubelet,
// containerd, runc and CRIU; the archive it names is restored with runc + CRIU and the process
// carries on counting from memory. Faults: CRIU refusing (a clear lastError, attempts spent, no
// result), the holder deleted mid-checkpoint (takeover, token + 1, the late job's completion
// refused and reported), the kubelet restarted mid-checkpoint (retried, captured), the controller
// SIGKILLed mid-checkpoint (the next one resumes; the first archive is a spare, never a result),
// and a controller without `create nodes/proxy` (403: a clear lastError, no result).
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Capture, Pod } from '@claimkit/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killControllers, spawnController } from '../chaos/helpers.ts';
import {
  expectAllInvariants,
  kube,
  type RunningController,
  startController,
  until,
} from '../controller/helpers.ts';
import { restartComponent, restoreCheckpoint } from '../harness/index.ts';
import { describeOnRealNode, e2eClients, e2eCluster, useTestNamespace } from '../harness/vitest.ts';
import {
  checkpointArchives,
  counterPod,
  criuFaults,
  lastLoggedNumber,
  MEMORY_COUNTER,
  runningContainer,
} from './helpers.ts';

/** The same, ignoring SIGTERM: a deleted pod stays Terminating (and checkpointable) for its grace. */
const STUBBORN_COUNTER = `trap '' TERM; ${MEMORY_COUNTER}`;

describeOnRealNode('captures that really checkpoint (Kubelet backend, real node)', ['workload'], (node) => {
  const c = () => kube();
  const work = mkdtempSync(join(tmpdir(), 'claimkit-restore-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  afterEach(() => criuFaults.clear());

  function capture(ns: string, name: string, app: string, o: { maxAttempts?: number } = {}): Capture {
    return {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name, namespace: ns },
      spec: {
        selector: { matchLabels: { app } },
        container: 'main',
        leaseSeconds: 300,
        timeoutSeconds: 120,
        maxAttempts: o.maxAttempts ?? 3,
        backend: { type: 'Kubelet' },
      },
    } as Capture;
  }

  const getCapture = async (ns: string, name: string) =>
    (await c().get('Capture', { namespace: ns, name })) as Capture;

  async function phase(ns: string, name: string, want: 'Captured' | 'Failed', timeoutMs = 120_000) {
    return until(
      `Capture ${ns}/${name} ${want}`,
      async () => {
        const cap = await getCapture(ns, name);
        if (cap.status?.phase === want) return cap;
        if (cap.status?.phase === 'Captured' || cap.status?.phase === 'Failed')
          throw new Error(`Capture ${name} ended ${cap.status.phase}: ${JSON.stringify(cap.status)}`);
        return undefined;
      },
      timeoutMs,
    );
  }

  /** The archive path a Kubelet result names (`checkpoint://<node>:<path>`). */
  function archiveOf(ref: string): string {
    const m = /^checkpoint:\/\/([^/@]+)(\/.+\.tar)(@sha256:[0-9a-f]{64})?$/.exec(ref);
    if (!m) throw new Error(`not a Kubelet checkpoint ref: ${ref}`);
    expect(m[1]).toBe(node.name);
    return m[2]!;
  }

  /** The object's Events, oldest first. */
  async function eventsOf(ns: string, name: string) {
    const evs = (await c().list('Event' as never, { namespace: ns })) as unknown as {
      items: {
        reason?: string;
        message?: string;
        note?: string;
        involvedObject?: { name?: string };
        regarding?: { name?: string };
      }[];
    };
    return evs.items.filter((e) => (e.involvedObject?.name ?? e.regarding?.name) === name);
  }
  const eventReasons = async (ns: string, name: string) =>
    (await eventsOf(ns, name)).map((e) => e.reason ?? '');
  /** The object's Events as `reason: message` lines (failure messages). */
  const eventStory = async (ns: string, name: string) =>
    (await eventsOf(ns, name)).map((e) => `${e.reason}: ${e.message ?? e.note ?? ''}`).join('\n');

  /** Waits until CRIU has been called `n` times under the delay fault (a checkpoint in flight). */
  const inFlight = (what: string, n = 1) =>
    until(`${what}: CRIU called under the delay fault`, async () => criuFaults.delayedCalls() >= n, 60_000);

  describe('with the admin controller', () => {
    const ns = useTestNamespace('ckpt');
    let ctl: RunningController;
    beforeAll(async () => {
      ctl = await startController(ns.name);
    });
    afterAll(async () => {
      await ctl?.stop();
    });

    it('checkpoints the holder for real, fenced by its token, and the archive restores a process that carries on counting', async () => {
      const holder = await counterPod(ns.name, 'counter-0', 'happy');
      await c().create(capture(ns.name, 'happy', 'happy'));
      const done = await phase(ns.name, 'happy', 'Captured');
      const st = done.status!;
      expect(st.claim).toBeUndefined();
      expect(st.result?.token).toBe(1);
      expect(st.epoch).toBe(1);
      expect(st.result?.capturedFrom).toEqual({ name: 'counter-0', uid: holder.metadata.uid });
      const archive = archiveOf(st.result!.ref);
      expect(archive.startsWith(`${node.checkpointDir}/`)).toBe(true);
      expect(existsSync(archive), `${archive} exists on the node`).toBe(true);
      expect(statSync(archive).size).toBeGreaterThan(10_000);
      expect(await eventReasons(ns.name, 'happy')).toEqual(expect.arrayContaining(['Acquired', 'Captured']));

      // The checkpointed container keeps running (the kubelet checkpoints without stopping it).
      const after = (await c().get('Pod', { namespace: ns.name, name: 'counter-0' })) as Pod;
      expect(runningContainer(after)).toBeDefined();

      const restored = await restoreCheckpoint(node, archive, work, 'ckpt-happy');
      try {
        // The last number the container logged before the checkpoint (CRI log: `<time> stdout F <n>`).
        const last = lastLoggedNumber(restored.logBeforeCheckpoint);
        expect(
          last,
          `numbers in the checkpoint's container.log: ${restored.logBeforeCheckpoint}`,
        ).toBeDefined();
        const counted = await until(
          'the restored process printing three numbers',
          async () => {
            const nums = restored.output().split('\n').filter(Boolean).map(Number);
            return nums.length >= 3 ? nums : undefined;
          },
          30_000,
        );
        // It carries on from its memory: the next number after the last one before the checkpoint.
        expect(counted[0]).toBe(last! + 1);
        expect(counted.slice(0, 3)).toEqual([last! + 1, last! + 2, last! + 3]);
      } finally {
        await restored.stop();
      }
      await expectAllInvariants(ns.name);
    });

    it('CRIU refusing: each attempt fails with the runtime’s words as lastError, then Failed, never a result', async () => {
      await counterPod(ns.name, 'refused-0', 'refused');
      criuFaults.fail('e2e: CRIU refuses');
      await c().create(capture(ns.name, 'refused', 'refused', { maxAttempts: 2 }));
      const failed = await phase(ns.name, 'refused', 'Failed');
      const st = failed.status!;
      expect(st.attempts).toBe(2);
      expect(st.result).toBeUndefined();
      expect(st.claim).toBeUndefined();
      expect(st.epoch).toBe(2);
      expect(st.lastError).toMatch(/checkpointing of \S+\/refused-0\/main failed/);
      expect(st.lastError).toMatch(/CRIU/);
      expect(await eventReasons(ns.name, 'refused')).toContain('CaptureFailed');
      await expectAllInvariants(ns.name);
    });

    it('the holder deleted mid-checkpoint: takeover with token + 1, the late checkpoint refused and reported, the result is the new holder’s', async () => {
      const a = await counterPod(ns.name, 'del-a', 'del', { script: STUBBORN_COUNTER, graceSeconds: 60 });
      // Long enough that the sweep (every 2 s) takes the claim over while del-a's checkpoint runs,
      // del-b's start (about 1-3 s to Ready) included: CRIU is called twice, each call delayed.
      criuFaults.delay(5);
      await c().create(capture(ns.name, 'del', 'del'));
      await inFlight('the checkpoint of del-a');
      const b = await counterPod(ns.name, 'del-b', 'del');
      // Deleted while its checkpoint runs: Terminating (it ignores SIGTERM), so a dead holder at once.
      await c().delete('Pod', { namespace: ns.name, name: 'del-a' });
      const taken = await until(
        'the claim taken over by del-b with token 2',
        async () => {
          const st = (await getCapture(ns.name, 'del')).status;
          return st?.claim?.holder.name === 'del-b' || st?.result?.capturedFrom?.name === 'del-b'
            ? st
            : undefined;
        },
        60_000,
      );
      expect(taken.epoch).toBeGreaterThanOrEqual(2);
      criuFaults.clear();
      const done = await phase(ns.name, 'del', 'Captured');
      const st = done.status!;
      expect(st.result?.capturedFrom).toEqual({ name: 'del-b', uid: b.metadata.uid });
      expect(st.result?.token).toBe(st.epoch);
      expect(st.result?.token).toBeGreaterThanOrEqual(2);
      expect(st.takeovers ?? 0).toBeGreaterThanOrEqual(1);
      // del-a's checkpoint finished after its claim moved on: an archive on the node, never the result.
      expect(archiveOf(st.result!.ref)).not.toContain('del-a');
      expect(await eventReasons(ns.name, 'del')).toContain('JobSuperseded');
      expect(a.metadata.uid).not.toBe(b.metadata.uid);
      await c()
        .delete('Pod', { namespace: ns.name, name: 'del-a' }, { gracePeriodSeconds: 0 })
        .catch(() => undefined);
      await expectAllInvariants(ns.name);
    });

    it('the kubelet restarted mid-checkpoint: the start is retried and the same holder is captured', async () => {
      const holder = await counterPod(ns.name, 'kr-0', 'kr');
      criuFaults.delay(4);
      await c().create(capture(ns.name, 'kr', 'kr'));
      await inFlight('the checkpoint of kr-0');
      await restartComponent(e2eCluster().stateDir!, 'kubelet');
      criuFaults.clear();
      const done = await phase(ns.name, 'kr', 'Captured');
      const st = done.status!;
      const story = `${JSON.stringify(st)}\nevents: ${await eventStory(ns.name, 'kr')}`;
      expect(st.result?.capturedFrom, story).toEqual({ name: 'kr-0', uid: holder.metadata.uid });
      // No takeover (the holder lived); a start lost to the restart spends no attempt.
      expect(st.result?.token, story).toBe(1);
      expect(st.epoch, story).toBe(1);
      expect(st.attempts ?? 0, story).toBe(0);
      expect(existsSync(archiveOf(st.result!.ref))).toBe(true);
      await expectAllInvariants(ns.name);
    });
  });

  describe('with a controller process SIGKILLed mid-checkpoint', () => {
    const ns = useTestNamespace('ckpt-kill');
    afterAll(async () => {
      await killControllers();
    });

    it('the next controller resumes: one result, with the token of the claim; the first archive is a spare', async () => {
      const kubeconfig = e2eCluster().kubeconfigPath;
      const first = await spawnController(ns.name, { kubeconfig, identity: 'ckpt-kill-a' });
      const holder = await counterPod(ns.name, 'sk-0', 'sk');
      criuFaults.delay(3);
      await c().create(capture(ns.name, 'sk', 'sk'));
      await inFlight('the checkpoint of sk-0');
      await first.kill('SIGKILL');
      const before = checkpointArchives(node.checkpointDir, ns.name, 'sk-0');
      await spawnController(ns.name, { kubeconfig, identity: 'ckpt-kill-b' });
      const done = await phase(ns.name, 'sk', 'Captured');
      const st = done.status!;
      const story = `${JSON.stringify(st)}\nevents: ${await eventStory(ns.name, 'sk')}`;
      expect(st.result?.capturedFrom, story).toEqual({ name: 'sk-0', uid: holder.metadata.uid });
      expect(st.result?.token, story).toBe(1);
      expect(st.epoch, story).toBe(1);
      // The killed start may have been cancelled with its request, or may have left an archive: if
      // it did, that archive is a spare (never the result) and the resumed start made a new one.
      const archives = checkpointArchives(node.checkpointDir, ns.name, 'sk-0');
      const result = archiveOf(st.result!.ref);
      expect(archives).toContain(result);
      for (const spare of before) expect(result).not.toBe(spare);
      expect(await eventReasons(ns.name, 'sk')).toContain('JobRestarted');
      await expectAllInvariants(ns.name);
    });
  });

  describe('with a controller that may not create nodes/proxy', () => {
    const ns = useTestNamespace('ckpt-403');
    let ctl: RunningController | undefined;
    afterAll(async () => {
      await ctl?.stop();
    });

    it('every attempt fails with the 403 in lastError, then Failed; no result', async () => {
      const cluster = e2eCluster();
      // The e2e user gets everything the controller does in this namespace, but not nodes/proxy.
      const rbac = e2eClients().rbac;
      await rbac.createNamespacedRole({
        namespace: ns.name,
        body: {
          metadata: { name: 'controller-without-node-proxy', namespace: ns.name },
          rules: [
            { apiGroups: ['claimkit.dev'], resources: ['*'], verbs: ['*'] },
            { apiGroups: [''], resources: ['pods', 'events'], verbs: ['*'] },
            { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['*'] },
            { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['*'] },
          ],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: ns.name,
        body: {
          metadata: { name: 'controller-without-node-proxy', namespace: ns.name },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'Role',
            name: 'controller-without-node-proxy',
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: cluster.userName }],
        },
      });
      ctl = await startController(ns.name, {
        kubeconfig: cluster.userKubeconfigPath,
        identity: 'ckpt-403',
        watchNodes: false,
      });
      await counterPod(ns.name, 'np-0', 'np');
      await c().create(capture(ns.name, 'np', 'np', { maxAttempts: 2 }));
      const failed = await phase(ns.name, 'np', 'Failed');
      const st = failed.status!;
      expect(st.attempts).toBe(2);
      expect(st.result).toBeUndefined();
      expect(st.lastError).toMatch(/HTTP 403/);
      expect(st.lastError).toMatch(/nodes\/proxy/);
      await expectAllInvariants(ns.name);
    });
  });
});
