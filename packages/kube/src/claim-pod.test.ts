// The claim call on the in-memory API model (which stores objects, bumps resourceVersions, evaluates
// the CRDs' rules and streams watch events): the reconcilers play the controller, FakeTimers the clock.

import { idle, inPool, onNode, pod, podStatus, put, ready, servingPoolWorld } from '@claimkit/core/testing';
import { describe, expect, test } from 'vitest';
import { ClaimWaitError, claimPod, waitForClaim } from './claim-pod.ts';

const poolWorld = (idlePods: number, maxPods = 4) => servingPoolWorld({ idlePods, maxPods });

describe('claimPod: claim a pool pod and learn where it is, in one call', () => {
  test('resolves once Bound with the claim, the pod, its address and ports; release deletes the claim', async () => {
    const { w, timers, claims, control, tick } = await poolWorld(1);
    const call = claimPod(w.model, timers, { pool: 'web' });
    await tick();
    expect(claims()).toHaveLength(1);
    expect(claims()[0]!.metadata.name).toMatch(/^web-/);
    await control();
    const got = await call;
    expect(got.claim.status?.phase).toBe('Bound');
    expect(got.pod.metadata.name).toBe('web-0');
    expect(got.address.podIPs).toEqual(['10.0.0.1']);
    expect(got.address.hostIP).toBe('192.168.0.1');
    expect(got.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    await got.release();
    await control();
    expect(claims()).toEqual([]);
    expect(w.tracker.violations).toEqual([]);
  });

  test('await using releases the claim when the scope ends', async () => {
    const { timers, claims, control, tick, w } = await poolWorld(1);
    {
      const call = claimPod(w.model, timers, { pool: 'web', podMetadata: { labels: { app: 'x' } } });
      await tick();
      await control();
      await using got = await call;
      expect(w.get('Pod', got.pod.metadata.name).metadata.labels?.app).toBe('x');
    }
    await control();
    expect(claims()).toEqual([]);
  });

  test("on timeout it rejects with the claim's own reason and deletes the claim", async () => {
    // No pod is ever Ready (the model runs no kubelet): the claim says NoReadyPod.
    const { w, timers, claims, control, tick } = await poolWorld(0, 4);
    const call = claimPod(w.model, timers, { pool: 'web', timeoutMs: 5000 });
    const outcome = call.catch((e: unknown) => e);
    await tick();
    await control();
    expect(claims()[0]!.status?.phase).toBe('Pending');
    timers.advance(5000);
    const e = (await outcome) as ClaimWaitError;
    expect(e).toBeInstanceOf(ClaimWaitError);
    expect(e.reason).toBe('NoReadyPod');
    expect(e.message).toMatch(
      /got no pod of pool web within 5000 ms \(NoReadyPod: no Ready Idle pod in pool web/,
    );
    expect(e.kept).toBe(false);
    await control();
    expect(claims()).toEqual([]);
  });

  test('keep: the claim stays after the timeout, and binds later', async () => {
    const { w, timers, claims, control, tick } = await poolWorld(0, 4);
    const call = claimPod(w.model, timers, { pool: 'web', timeoutMs: 1000, keep: true });
    const outcome = call.catch((e: unknown) => e);
    await tick();
    timers.advance(1000);
    const e = (await outcome) as ClaimWaitError;
    expect(e.reason).toBe('Timeout');
    expect(e.kept).toBe(true);
    expect(claims()).toHaveLength(1);
    // A pod comes: the kept claim binds, and waitForClaim finds it Bound.
    await put(
      w.model,
      pod(
        'web-late',
        inPool('web'),
        idle(),
        ready(),
        onNode('n1'),
        podStatus({ podIP: '10.0.0.9', podIPs: [{ ip: '10.0.0.9' }] }),
      ),
    );
    await control();
    const name = claims()[0]!.metadata.name;
    const later = await waitForClaim(w.model, timers, { namespace: 'default', name });
    expect(later.address.podIPs).toEqual(['10.0.0.9']);
  });

  test('an AbortSignal ends the wait: Aborted, the claim deleted', async () => {
    const { w, timers, claims, control, tick } = await poolWorld(0, 4);
    const ac = new AbortController();
    const outcome = claimPod(w.model, timers, { pool: 'web', signal: ac.signal }).catch((e: unknown) => e);
    await tick();
    ac.abort();
    const e = (await outcome) as ClaimWaitError;
    expect(e.reason).toBe('Aborted');
    await control();
    expect(claims()).toEqual([]);
    // Aborted before it starts: nothing is created.
    const before = await claimPod(w.model, timers, { pool: 'web', signal: AbortSignal.abort() }).catch(
      (x: ClaimWaitError) => x.reason,
    );
    expect(before).toBe('Aborted');
    expect(claims()).toEqual([]);
  });

  test('a claim the API server refuses: Refused, with its error as the cause', async () => {
    const { w, timers } = await poolWorld(1);
    const e = (await claimPod(w.model, timers, { pool: 'web', name: 'Not_A_Name' }).catch(
      (x: unknown) => x,
    )) as ClaimWaitError;
    expect(e.reason).toBe('Refused');
    expect((e.cause as Error).name).toBe('ApiError');
  });

  test('onLost: the handler is told once when the pod goes (the claim no longer holds it)', async () => {
    const { w, timers, control, tick } = await poolWorld(1);
    const call = claimPod(w.model, timers, { pool: 'web' });
    await tick();
    await control();
    const got = await call;
    const seen: Array<string | undefined> = [];
    got.onLost((c) => seen.push(c?.status?.podName || 'no pod'));
    await w.model.delete('Pod', w.key('web-0'));
    w.model.completePodDeletions();
    await control();
    await tick();
    expect(seen).toEqual(['no pod']);
    expect(w.get('PodClaim', got.claim.metadata.name).status?.phase).toBe('Lost');
    await got.release();
  });
});
