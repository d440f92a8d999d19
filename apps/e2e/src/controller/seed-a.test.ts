// Seed A (seeds/capture-claim-dead-owner.md) on the real control plane: a Capture guarded by a
// 3000 s lease, the Http backend served by the reference agent on loopback, the controller in
// process. The holder dies mid-capture and a new Ready pod holds the claim within seconds; a
// replacement pod with the same name and a new UID is not the holder; the superseded holder's late
// result is rejected; the agent sees strictly increasing tokens; a restarted controller resumes the
// job it had started instead of starting another.

import { CaptureAgent } from '@claimkit/controller';
import { type Capture, ClaimSuperseded, completeCapture } from '@claimkit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestNamespace } from '../harness/vitest.ts';
import {
  expectAllInvariants,
  getOrUndefined,
  kube,
  podSpec,
  type RunningController,
  startController,
  until,
  untilPodReady,
} from './helpers.ts';

describe('Seed A: capture claim with a dead owner', () => {
  const ns = useTestNamespace('ctl-seed-a');
  let agent: CaptureAgent;
  let agentUrl = '';
  let ctl: RunningController | undefined;
  const gates = new Map<number, () => void>();

  beforeAll(async () => {
    // Jobs run until the test releases their token.
    agent = new CaptureAgent({
      capture: (req, signal) =>
        new Promise<string>((resolve, reject) => {
          gates.set(req.token, () => resolve(`snapshot://${req.namespace}/${req.capture}@${req.token}`));
          signal.addEventListener('abort', () => reject(new Error('superseded')));
        }),
    });
    agentUrl = (await agent.listen(0, '127.0.0.1')).url;
  });
  afterAll(async () => {
    await ctl?.stop();
    await agent?.close();
  });

  const key = () => ({ namespace: ns.name, name: 'snap' });
  const get = () => kube().get('Capture', key());

  async function pod(name: string) {
    await kube().create(podSpec(name, ns.name, { app: 'seed-a' }));
    return untilPodReady(ns.name, name);
  }

  it('takes over at once from a deleted holder, fences the late result, resumes after a restart', async () => {
    ctl = await startController(ns.name);
    await pod('db-0');
    await pod('db-1');
    const cap: Capture = {
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name: 'snap', namespace: ns.name },
      spec: {
        selector: { matchLabels: { app: 'seed-a' } },
        leaseSeconds: 3000,
        timeoutSeconds: 1800,
        maxAttempts: 3,
        backend: { type: 'Http', url: agentUrl },
      },
    };
    await kube().create(cap);
    const first = await until('the first job', async () => {
      const c = await get();
      return c.status?.claim?.job ? c.status.claim : undefined;
    });
    expect(first.leaseSeconds).toBe(3000);

    // The holder dies mid-capture: a Ready pod holds the claim within seconds, not in 50 minutes.
    const t0 = Date.now();
    await kube().delete('Pod', { namespace: ns.name, name: first.holder.name }, { gracePeriodSeconds: 0 });
    const second = await until(
      'takeover',
      async () => {
        const c = await get();
        return c.status?.claim && c.status.claim.token > first.token && c.status.claim.job
          ? c.status.claim
          : undefined;
      },
      10_000,
    );
    const takeoverMs = Date.now() - t0;
    expect(takeoverMs).toBeLessThan(5000);
    expect(second.holder.name).not.toBe(first.holder.name);

    // The superseded holder's late result is rejected and nothing is written.
    const late = await completeCapture(kube(), key(), first.token, 'snapshot://late', () => Date.now()).catch(
      (e) => e,
    );
    expect(late).toBeInstanceOf(ClaimSuperseded);
    expect((await get()).status?.result).toBeUndefined();

    // A replacement pod with the holder's name and a new UID is not the holder: stop the controller,
    // replace the holder pod under the same name, start a new controller.
    await ctl.stop();
    ctl = undefined;
    const oldUid = second.holder.uid;
    await kube().delete('Pod', { namespace: ns.name, name: second.holder.name }, { gracePeriodSeconds: 0 });
    await until('old holder pod gone', async () => {
      const p = await getOrUndefined(kube().get('Pod', { namespace: ns.name, name: second.holder.name }));
      return !p || (p.metadata.uid !== oldUid ? true : undefined);
    });
    const replacement = await pod(second.holder.name);
    expect(replacement.metadata.uid).not.toBe(oldUid);
    ctl = await startController(ns.name);
    const third = await until('takeover from the replaced holder', async () => {
      const c = await get();
      return c.status?.claim && c.status.claim.token > second.token && c.status.claim.job
        ? c.status.claim
        : undefined;
    });
    expect(third.holder.uid).not.toBe(oldUid); // re-entry needs the same name AND uid

    // Restart mid-capture: the new controller resumes polling the recorded job; no new start.
    const accepted = [...(agent.accepted.get(`${ns.name}/snap`) ?? [])];
    await ctl.stop();
    ctl = await startController(ns.name);
    gates.get(third.token)!();
    const done = await until('Captured', async () => {
      const c = await get();
      return c.status?.phase === 'Captured' ? c : undefined;
    });
    expect(done.status?.result).toMatchObject({
      token: third.token,
      capturedFrom: { name: third.holder.name },
    });
    expect(done.status?.result?.ref).toBe(`snapshot://${ns.name}/snap@${third.token}`);
    expect(agent.accepted.get(`${ns.name}/snap`)).toEqual(accepted);

    // The agent saw strictly increasing tokens.
    expect(accepted.length).toBeGreaterThanOrEqual(3);
    expect(agent.tokenViolations()).toEqual([]);
    // (the reconcile that wrote Captured may still be recording its event)
    const metrics = ctl.manager.metrics;
    await until(
      'the resumed controller counted its reconciles',
      async () => metrics.reconciles.total({ kind: 'Capture' }) > 0,
    );
    await expectAllInvariants(ns.name);
  });
});
