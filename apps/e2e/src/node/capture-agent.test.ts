// The reference capture agent as users run it: the chart's DaemonSet (captureAgentManifests) on the
// real node, in our controller image, checkpointing a Capture holder's container through its node's
// kubelet (containerd, runc, CRIU), by default. A Capture with `backend.type: Http` and
// `url: http://{nodeIP}:8750/v1/captures` ends Captured with a ref that names the stored archive and
// its digest; that archive restores into a process that carries on counting. The agent fences on
// its own (a lower token is refused, a repeated start is the same job) and survives its own
// restart mid-job (the DaemonSet's pod deleted while CRIU runs: the next pod resumes the job).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCheckpointRef } from '@claimkit/controller';
import type { Pod } from '@claimkit/core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  expectAllInvariants,
  kube,
  type RunningController,
  startController,
  until,
} from '../controller/helpers.ts';
import { restoreCheckpoint } from '../harness/index.ts';
import { describeOnRealNode, useTestNamespace } from '../harness/vitest.ts';
import { type InstalledAgent, installCaptureAgent } from './capture-agent-install.ts';
import { counterPod, criuFaults, lastLoggedNumber } from './helpers.ts';

describeOnRealNode(
  'the capture agent DaemonSet checkpoints through its node (real node)',
  ['controller', 'workload'],
  (node) => {
    const ns = useTestNamespace('agent');
    const c = () => kube();
    const work = mkdtempSync(join(tmpdir(), 'claimkit-agent-restore-'));
    let ctl: RunningController;
    let agent: InstalledAgent;
    /** The agent's data directory on the node (per run), mounted at the same path in its pod. */
    let dataDir = '';
    /** The controller's token for the agents' audience. */
    let tokenFile = '';
    const agentUrl = `http://${node.ip}:8750/v1/captures`;

    beforeAll(async () => {
      agent = await installCaptureAgent(ns.name, node);
      ({ dataDir, tokenFile } = agent);
      ctl = await startController(ns.name, { captureAgentTokenFile: tokenFile });
    }, 300_000);
    afterEach(() => criuFaults.clear());
    afterAll(async () => {
      await ctl?.stop();
      await agent?.uninstall();
      rmSync(work, { recursive: true, force: true });
    });

    const httpCapture = (name: string, app: string) => agent.httpCapture(name, app);
    const agentReady = (what: string, notUid?: string) => agent.ready(what, notUid);
    const agentLogs = () => agent.logs();
    const captured = (name: string) => agent.captured(name);

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
