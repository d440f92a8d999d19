// The reference capture agent as users run it: the chart's DaemonSet (captureAgentManifests) on the
// real node, in our controller image, checkpointing a Capture holder's container through its node's
// kubelet (containerd, runc, CRIU), by default. A Capture with `backend.type: Http` and
// `url: http://{nodeIP}:8750/v1/captures` ends Captured with a ref that names the stored archive and
// its digest; that archive restores into a process that carries on counting. The agent fences on
// its own (a lower token is refused, a repeated start is the same job) and survives its own
// restart mid-job (the DaemonSet's pod deleted while CRIU runs: the next pod resumes the job).
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CAPTURE_AGENT_AUDIENCE,
  CAPTURE_AGENT_NAME,
  captureAgentManifests,
  parseCheckpointRef,
} from '@claimkit/controller';
import type { Capture, Pod } from '@claimkit/core';
import { CONTROLLER_NAME } from '@claimkit/core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  expectAllInvariants,
  kube,
  type RunningController,
  startController,
  until,
} from '../controller/helpers.ts';
import {
  applyObjects,
  type KubernetesObject,
  realNodePlacement,
  restoreCheckpoint,
} from '../harness/index.ts';
import { describeOnRealNode, e2eClients, e2eCluster, useTestNamespace } from '../harness/vitest.ts';
import { counterPod, criuFaults, lastLoggedNumber, unlessNotFound } from './helpers.ts';

describeOnRealNode(
  'the capture agent DaemonSet checkpoints through its node (real node)',
  ['controller', 'workload'],
  (node) => {
    const ns = useTestNamespace('agent');
    const c = () => kube();
    const work = mkdtempSync(join(tmpdir(), 'claimkit-agent-restore-'));
    let ctl: RunningController;
    let applied: KubernetesObject[] = [];
    /** The agent's data directory on the node (per run), mounted at the same path in its pod. */
    let dataDir = '';
    /** The controller's token for the agents' audience. */
    let tokenFile = '';
    const agentUrl = `http://${node.ip}:8750/v1/captures`;

    /** The chart's agent objects, placed on the real node, in this test's namespace. */
    function agentObjects(namespace: string): KubernetesObject[] {
      const objs = captureAgentManifests().flatMap((f) => f.objects) as unknown as (KubernetesObject & {
        metadata: { name: string; namespace?: string };
        subjects?: { namespace?: string }[];
        roleRef?: { name: string };
        spec?: { template: { spec: Record<string, unknown> } };
      })[];
      return objs.map((o) => {
        const x = structuredClone(o);
        if (x.metadata.namespace) x.metadata.namespace = namespace;
        if (x.kind === 'ClusterRole' || x.kind === 'ClusterRoleBinding')
          x.metadata.name = `${x.metadata.name}-${namespace}`;
        if (x.roleRef) x.roleRef.name = `${x.roleRef.name}-${namespace}`;
        for (const s of x.subjects ?? []) s.namespace = namespace;
        if (x.kind === 'DaemonSet') {
          const pod = x.spec!.template.spec as {
            containers: { args: string[]; volumeMounts: { name: string; mountPath: string }[] }[];
            volumes: { name: string; hostPath: { path: string } }[];
          } & Record<string, unknown>;
          Object.assign(pod, realNodePlacement());
          const agent = pod.containers[0]!;
          // This node's kubelet listens on a port of its own and writes archives under the run's dir.
          agent.args = [
            ...agent.args.filter((a) => !a.startsWith('--store-dir') && !a.startsWith('--state-dir')),
            `--kubelet-port=${node.kubeletPort}`,
            `--store-dir=${dataDir}/archives`,
            `--state-dir=${dataDir}/state`,
          ];
          for (const v of pod.volumes) {
            if (v.name === 'kubelet-checkpoints') v.hostPath.path = node.checkpointDir;
            if (v.name === 'data') v.hostPath.path = dataDir;
          }
          for (const m of agent.volumeMounts) if (m.name === 'data') m.mountPath = dataDir;
        }
        return x as KubernetesObject;
      });
    }

    const agentPods = async () =>
      (
        (await c().list('Pod', {
          namespace: ns.name,
          labelSelector: 'app.kubernetes.io/component=capture-agent',
        })) as { items: Pod[] }
      ).items;

    async function agentReady(what: string, notUid?: string): Promise<Pod> {
      return until(
        `${what}: the capture agent's pod Ready on ${node.name} (DaemonSet ${CAPTURE_AGENT_NAME})`,
        async () => {
          const pods = await agentPods();
          const seen = pods.map((x) => describePod(x)).join('; ') || 'none';
          const p = pods.find(
            (x) =>
              x.metadata.uid !== notUid &&
              !x.metadata.deletionTimestamp &&
              x.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True'),
          );
          // Thrown (not returned) so that a timeout says what the pods looked like last.
          if (!p) throw new Error(`pods: ${seen}`);
          const healthy = await fetch(`http://${node.ip}:8750/healthz`).then(
            (r) => r.ok,
            (e: Error) => e.message,
          );
          if (healthy !== true) throw new Error(`GET http://${node.ip}:8750/healthz: ${healthy}`);
          return p;
        },
        120_000,
      );
    }

    /** A pod's phase and its containers' states, for failure messages. */
    function describePod(p: Pod): string {
      const cs = (
        p.status as {
          containerStatuses?: {
            name: string;
            state?: Record<string, { reason?: string; message?: string }>;
          }[];
        }
      )?.containerStatuses;
      const states = (cs ?? [])
        .map((x) => {
          const [k, v] = Object.entries(x.state ?? {})[0] ?? ['?', {}];
          return `${x.name} ${k}${v?.reason ? ` ${v.reason}` : ''}${v?.message ? `: ${v.message.slice(0, 300)}` : ''}`;
        })
        .join(', ');
      return `${p.metadata.name} ${p.status?.phase ?? '?'} [${states}]`;
    }

    beforeAll(async () => {
      dataDir = join(e2eCluster().stateDir ?? tmpdir(), `capture-agent-${ns.name}`);
      mkdirSync(dataDir, { recursive: true });
      applied = agentObjects(ns.name);
      await applyObjects(e2eClients(), applied);
      await agentReady('installed');
      // The agent accepts only system:serviceaccount:<its namespace>:claimkit-controller, by a
      // token for its audience (the chart's controller has one projected into its pod; this
      // in-process controller gets one by TokenRequest).
      const core = e2eClients().core;
      await core.createNamespacedServiceAccount({
        namespace: ns.name,
        body: { metadata: { name: CONTROLLER_NAME } },
      });
      const tr = await core.createNamespacedServiceAccountToken({
        namespace: ns.name,
        name: CONTROLLER_NAME,
        body: { spec: { audiences: [CAPTURE_AGENT_AUDIENCE], expirationSeconds: 3600 } },
      });
      tokenFile = join(work, 'controller-token');
      writeFileSync(tokenFile, tr.status?.token ?? '');
      ctl = await startController(ns.name, { captureAgentTokenFile: tokenFile });
    }, 300_000);
    afterEach(() => criuFaults.clear());
    afterAll(async () => {
      await ctl?.stop();
      const { objects } = e2eClients();
      for (const o of [...applied].reverse()) await unlessNotFound(objects.delete(o));
      rmSync(work, { recursive: true, force: true });
    });

    function httpCapture(name: string, app: string): Capture {
      return {
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'Capture',
        metadata: { name, namespace: ns.name },
        spec: {
          selector: { matchLabels: { app } },
          container: 'main',
          leaseSeconds: 300,
          timeoutSeconds: 120,
          maxAttempts: 3,
          backend: { type: 'Http', url: 'http://{nodeIP}:8750/v1/captures' },
        },
      } as Capture;
    }

    /** The last lines every agent pod logged (failure messages). */
    async function agentLogs(): Promise<string> {
      const logs = await Promise.all(
        (await agentPods()).map(async (p) => {
          const text = await e2eClients()
            .core.readNamespacedPodLog({ namespace: ns.name, name: p.metadata.name, tailLines: 30 })
            .catch((x: Error) => `(no log: ${x.message})`);
          return `--- agent pod ${p.metadata.name}:\n${text}`;
        }),
      );
      return logs.join('\n');
    }

    /** Waits for Captured; a timeout says the Capture's status and what the agent logged. */
    async function captured(name: string): Promise<Capture> {
      try {
        return await until(
          `Capture ${name} Captured`,
          async () => {
            const cap = (await c().get('Capture', { namespace: ns.name, name })) as Capture;
            if (cap.status?.phase === 'Failed')
              return Promise.reject(new Error(`Failed: ${JSON.stringify(cap.status)}`));
            if (cap.status?.phase !== 'Captured')
              throw new Error(`status: ${JSON.stringify(cap.status ?? {})}`);
            return cap;
          },
          90_000,
        );
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${await agentLogs()}`);
      }
    }

    const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

    it('checkpoints the holder through the kubelet by default; the ref names the stored archive and its digest, which restores', async () => {
      const holder = await counterPod(ns.name, 'ag-0', 'ag');
      await c().create(httpCapture('ag', 'ag'));
      const done = await captured('ag');
      const st = done.status!;
      expect(st.result).toMatchObject({ token: 1, capturedFrom: { name: 'ag-0', uid: holder.metadata.uid } });
      expect(st.epoch).toBe(1);
      const ref = parseCheckpointRef(st.result!.ref);
      expect(ref.node).toBe(node.name);
      // Stored per capture and token, so a user finds it by the Capture alone.
      expect(ref.path).toBe(`${dataDir}/archives/${ns.name}/ag/1.tar`);
      expect(ref.sha256).toBe(sha256(ref.path));

      const restored = await restoreCheckpoint(node, ref.path, work, 'agent-ag');
      try {
        const last = lastLoggedNumber(restored.logBeforeCheckpoint)!;
        const nums = await until(
          'the restored process printing two numbers',
          async () => {
            const n = restored.output().split('\n').filter(Boolean).map(Number);
            return n.length >= 2 ? n : undefined;
          },
          30_000,
        );
        expect(nums.slice(0, 2)).toEqual([last + 1, last + 2]);
      } finally {
        await restored.stop();
      }
      await expectAllInvariants(ns.name);
    });

    it('admits only the controller’s token, and fences on its own: a lower token is refused (409), a repeated start is the same job', async () => {
      const holder = (await c().get('Pod', { namespace: ns.name, name: 'ag-0' })) as Pod;
      const body = (token: number) =>
        JSON.stringify({
          namespace: ns.name,
          pod: 'ag-0',
          uid: holder.metadata.uid,
          container: 'main',
          node: node.name,
          capture: 'fence',
          token,
        });
      const auth = () => ({ authorization: `Bearer ${readFileSync(tokenFile, 'utf8')}` });
      const post = (token: number, withToken = true) =>
        fetch(agentUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(withToken ? auth() : {}) },
          body: body(token),
        });
      // Without the controller's token the agent starts nothing.
      const anonymous = await post(5, false);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.text()).toMatch(/bearer token is required/);
      const first = await post(5);
      expect(first.status).toBe(201);
      const { id } = (await first.json()) as { id: string };
      const again = await post(5);
      expect(again.status).toBe(200);
      expect(((await again.json()) as { id: string }).id).toBe(id);
      const lower = await post(4);
      expect(lower.status).toBe(409);
      expect(await lower.text()).toMatch(/token 4 is lower than 5/);
      await until(
        `agent job ${id} finished`,
        async () => {
          const s = (await (await fetch(`${agentUrl}/${id}`, { headers: auth() })).json()) as {
            state: string;
          };
          return s.state !== 'Running' ? s : undefined;
        },
        60_000,
      );
    });

    it('survives its own restart mid-job: the next agent pod resumes the job and the Capture gets one result', async () => {
      const holder = await counterPod(ns.name, 'rs-0', 'rs');
      const before = await agentReady('before the restart');
      criuFaults.delay(4);
      await c().create(httpCapture('rs', 'rs'));
      await until(
        'CRIU called for rs-0 under the delay fault',
        async () => criuFaults.delayedCalls() >= 1,
        60_000,
      );
      await c().delete('Pod', { namespace: ns.name, name: before.metadata.name });
      await agentReady('after its pod was deleted mid-job', before.metadata.uid);
      criuFaults.clear();
      const done = await captured('rs');
      const st = done.status!;
      const story = `${JSON.stringify(st)}\n${await agentLogs()}`;
      expect(st.result, story).toMatchObject({
        token: 1,
        capturedFrom: { name: 'rs-0', uid: holder.metadata.uid },
      });
      expect(st.epoch, story).toBe(1);
      expect(st.attempts ?? 0, story).toBe(0);
      const ref = parseCheckpointRef(st.result!.ref);
      expect(ref.sha256).toBe(sha256(ref.path));
      await expectAllInvariants(ns.name);
    });
  },
);
