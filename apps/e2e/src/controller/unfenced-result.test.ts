// Issue 10 on the real control plane with the CRDs and the controller only (no webhook): the
// `kubectl patch capture fn-v1 --subresource=status --type=merge` of a result with token 1 while
// the epoch is 5 and the claim is closed is refused by the CRD's own CEL rule, with a clear message,
// and nothing is stored. What gets in where the rules are missing (a CRD from before them, or a
// legacy writer) is flagged by the controller and discarded by doctor --fix: see
// packages/core/src/reconcile/capture-fence.test.ts, doctor.test.ts and the simulator's kubectl actor.

import type { Capture } from '@claimkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestNamespace } from '../harness/vitest.ts';
import { kube, podSpec, type RunningController, untilPodReady } from './helpers.ts';

const staleResult = (uid: string) => ({
  phase: 'Captured',
  result: {
    ref: 'snap://stale',
    token: 1,
    capturedFrom: { name: 'fn-0', uid },
    completionTime: new Date().toISOString(),
  },
});

const _condition = (c: Capture, type: string) => c.status?.conditions?.find((x) => x.type === type);

describe('an unfenced Capture result with no webhook', () => {
  const ns = useTestNamespace('ctl-unfenced');
  let ctl: RunningController | undefined;
  afterAll(async () => {
    await ctl?.stop();
  });

  /** Epoch 5 the only way the CRD allows: a claim with token 5, then closed. */
  async function epochFive(key: { namespace: string; name: string }, holderUid: string) {
    const t = new Date().toISOString();
    const claim = {
      holder: { name: 'fn-0', uid: holderUid },
      acquireTime: t,
      renewTime: t,
      leaseSeconds: 3000,
    };
    await kube().patchStatus('Capture', key, {
      status: { phase: 'Capturing', epoch: 5, claim: { ...claim, token: 5 } },
    });
    await kube().patchStatus('Capture', key, { status: { phase: 'Pending', claim: null } });
  }

  it('is refused by the API server with the CRD rules installed', async () => {
    const key = { namespace: ns.name, name: 'fn-v1' };
    await kube().create(podSpec('fn-0', ns.name, { app: 'fn' }));
    const holder = await untilPodReady(ns.name, 'fn-0');
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
    await epochFive(key, holder.metadata.uid!);
    // Even as cluster-admin: the rule lives in the API server, not in who writes.
    const e = await kube()
      .patchStatus('Capture', key, { status: staleResult(holder.metadata.uid!) })
      .catch((x: unknown) => x);
    expect(e).toMatchObject({
      reason: 'Invalid',
      message: expect.stringContaining('no result without the current claim token'),
    });
    expect((await kube().get('Capture', key)).status).toMatchObject({ phase: 'Pending', epoch: 5 });
    expect((await kube().get('Capture', key)).status?.result).toBeUndefined();
    await kube().delete('Capture', key);
  });
});
