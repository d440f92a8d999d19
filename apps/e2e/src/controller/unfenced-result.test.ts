// Issue 10 on the real control plane with the CRDs and the controller only (no webhook): the
// `kubectl patch capture fn-v1 --subresource=status --type=merge` of a result with token 1 while
// the epoch is 5 and the claim is closed. Either the API server refuses it (a CEL rule), or it gets
// in and the controller flags it: condition ResultFenced=False, Ready not True, one Warning Event,
// phase and result untouched, no further writes. `doctor --fix` (core's runDoctor) then discards
// it, and the next claim gets token 6.

import { acquireCapture, type Capture, type KubeEvent } from '@claimkit/core';
import { runDoctor } from '@claimkit/core/doctor';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestNamespace } from '../harness/vitest.ts';
import {
  expectAllInvariants,
  getOrUndefined,
  isReady,
  kube,
  podSpec,
  type RunningController,
  startController,
  until,
} from './helpers.ts';

const condition = (c: Capture, type: string) => c.status?.conditions?.find((x) => x.type === type);

describe('an unfenced Capture result with no webhook', () => {
  const ns = useTestNamespace('ctl-unfenced');
  let ctl: RunningController | undefined;
  afterAll(async () => {
    await ctl?.stop();
  });

  it('is refused by the API server, or flagged once by the controller and discarded by doctor --fix', async () => {
    ctl = await startController(ns.name);
    const key = { namespace: ns.name, name: 'fn-v1' };
    await kube().create(podSpec('fn-0', ns.name, { app: 'fn' }));
    const holder = await until('pod fn-0 Ready', async () => {
      const p = await getOrUndefined(kube().get('Pod', { namespace: ns.name, name: 'fn-0' }));
      return p && isReady(p) ? p : undefined;
    });
    await kube().create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'Capture',
      metadata: { name: 'fn-v1', namespace: ns.name },
      spec: {
        selector: { matchLabels: { app: 'fn' } },
        leaseSeconds: 3000,
        timeoutSeconds: 1800,
        maxAttempts: 3,
        backend: { type: 'External' },
      },
    } satisfies Capture);
    // Five claims came and went (epoch 5, no claim open), as kubectl would leave it.
    await kube().patchStatus('Capture', key, { status: { phase: 'Pending', epoch: 5 } });
    try {
      await kube().patchStatus('Capture', key, {
        status: {
          phase: 'Captured',
          result: {
            ref: 'snap://stale',
            token: 1,
            capturedFrom: { name: 'fn-0', uid: holder.metadata.uid },
            completionTime: new Date().toISOString(),
          },
        },
      });
    } catch (e) {
      // The API server's own rule stopped it: nothing got in, nothing to detect.
      expect(e).toMatchObject({ reason: 'Invalid', message: expect.stringMatching(/token/) });
      expect((await kube().get('Capture', key)).status?.result).toBeUndefined();
      await expectAllInvariants(ns.name);
      return;
    }

    const flagged = await until('ResultFenced=False', async () => {
      const c = await kube().get('Capture', key);
      return condition(c, 'ResultFenced')?.status === 'False' ? c : undefined;
    });
    expect(flagged.status).toMatchObject({
      phase: 'Captured',
      epoch: 5,
      result: { token: 1, ref: 'snap://stale' },
    });
    expect(condition(flagged, 'ResultFenced')).toMatchObject({
      reason: 'UnfencedResult',
      message: expect.stringMatching(/result token 1 is older than epoch 5/),
      observedGeneration: flagged.metadata.generation,
    });
    expect(condition(flagged, 'Ready')).toMatchObject({ status: 'False', reason: 'UnfencedResult' });
    // No write storm: over a few sweeps (every 2 s) nothing is written and the Event stays one.
    await new Promise((r) => setTimeout(r, 5000));
    expect((await kube().get('Capture', key)).metadata.resourceVersion).toBe(
      flagged.metadata.resourceVersion,
    );
    const events = ((await kube().list('Event', { namespace: ns.name })).items as KubeEvent[]).filter(
      (e) => e.involvedObject.name === 'fn-v1' && e.reason === 'UnfencedResult',
    );
    expect(events.map((e) => [e.type, e.count ?? 1])).toEqual([['Warning', 1]]);

    const run = await runDoctor(kube(), { namespace: ns.name, now: () => Date.now(), fix: true });
    expect(run.findings.map((f) => f.code)).toEqual(['CK013']);
    expect(run.remaining).toEqual([]);
    const discarded = await until('ResultFenced=True after the discard', async () => {
      const c = await kube().get('Capture', key);
      return condition(c, 'ResultFenced')?.status === 'True' ? c : undefined;
    });
    expect(discarded.status?.result).toBeUndefined();
    expect(discarded.status).toMatchObject({ phase: 'Pending', epoch: 5 });
    // The capture runs again, with a token above every one issued.
    const { capture } = await acquireCapture(kube(), key, { name: 'fn-0', uid: holder.metadata.uid! }, () =>
      Date.now(),
    );
    expect(capture.status?.claim?.token).toBe(6);
    await expectAllInvariants(ns.name);
  });
});
