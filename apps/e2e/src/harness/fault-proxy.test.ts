// The fault proxy injects what it says, at the rate it says, the same way for the same seed: its
// decisions alone (pure, 100k draws), then in front of the real API server, where what the client
// saw and what the API server stored are compared with the decisions the seed predicts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeClient } from '@claimkit/controller';
import { type ApiError, isApiError, type PodClaim } from '@claimkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../controller/helpers.ts';
import { type Decision, FAULTS, type FaultPlan, faultDecider, startFaultProxy } from './fault-proxy.ts';
import { e2eCluster, useTestNamespace } from './vitest.ts';

const plan = (o: Partial<FaultPlan> = {}): FaultPlan => ({
  seed: 1,
  rate: 0.1,
  delayMs: 1000,
  watchCutRate: 0.5,
  watchCutAfterMs: [100, 200],
  ...o,
});

const draw = (p: FaultPlan, n: number, watch = false): Decision[] => {
  const decide = faultDecider(p);
  return Array.from({ length: n }, () => decide({ watch }));
};

describe('fault proxy: decisions', () => {
  it('the same seed gives the same faults; another seed others', () => {
    expect(draw(plan({ seed: 7 }), 2000)).toEqual(draw(plan({ seed: 7 }), 2000));
    expect(draw(plan({ seed: 7 }), 2000)).not.toEqual(draw(plan({ seed: 8 }), 2000));
  });

  it('faults the share of requests it is given, every kind about equally, and cuts that share of watches', () => {
    const n = 100_000;
    const ds = draw(plan({ seed: 3, rate: 0.1, watchCutRate: 0.4, watchCutAfterMs: [500, 900] }), n, true);
    const faulted = ds.filter((d) => d.fault !== 'none');
    expect(faulted.length / n).toBeGreaterThan(0.097);
    expect(faulted.length / n).toBeLessThan(0.103);
    for (const f of FAULTS) {
      const share = faulted.filter((d) => d.fault === f).length / faulted.length;
      expect(share, f).toBeGreaterThan(1 / FAULTS.length - 0.02);
      expect(share, f).toBeLessThan(1 / FAULTS.length + 0.02);
    }
    const passed = ds.filter((d) => d.fault === 'none');
    const cuts = passed.flatMap((d) =>
      d.fault === 'none' && d.cutAfterMs !== undefined ? [d.cutAfterMs] : [],
    );
    expect(cuts.length / passed.length).toBeGreaterThan(0.39);
    expect(cuts.length / passed.length).toBeLessThan(0.41);
    expect(Math.min(...cuts)).toBeGreaterThanOrEqual(500);
    expect(Math.max(...cuts)).toBeLessThanOrEqual(900);
    // Only watches are cut; only the listed faults are drawn.
    expect(draw(plan({ watchCutRate: 1 }), 1000, false).some((d) => 'cutAfterMs' in d)).toBe(false);
    expect(new Set(draw(plan({ rate: 1, faults: ['throttle', 'reset'] }), 1000).map((d) => d.fault))).toEqual(
      new Set(['throttle', 'reset']),
    );
  });
});

describe('fault proxy: in front of the API server', () => {
  const ns = useTestNamespace('fault-proxy');
  const dir = mkdtempSync(join(tmpdir(), 'claimkit-fault-proxy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers, resets, loses and delays exactly the requests the seed says; the API server sees the rest', async () => {
    const p = plan({ seed: 42, rate: 0.35, delayMs: 3000, watchCutRate: 0 });
    const proxy = await startFaultProxy({ upstreamKubeconfig: e2eCluster().kubeconfigPath, dir, plan: p });
    try {
      // No retries, a timeout well below the proxy's delay: every fault reaches the caller as is.
      const viaProxy = kubeClient(proxy.kubeconfigPath, { timeoutMs: 1500, retryThrottled: 0 });
      const direct = kubeClient(e2eCluster().kubeconfigPath);
      const n = 80;
      const expected = draw(p, n).map((d) => d.fault);
      // (This seed draws every kind of fault among the first n.)
      for (const f of FAULTS) expect(expected, f).toContain(f);
      const seen: string[] = [];
      for (let i = 0; i < n; i++) {
        const claim: PodClaim = {
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaim',
          metadata: { name: `c-${i}`, namespace: ns.name },
          spec: { poolName: 'none' },
        };
        try {
          await viaProxy.create(claim);
          seen.push('none');
        } catch (e) {
          if (!isApiError(e)) throw e;
          seen.push(outcome(e));
        }
      }
      // What the client saw: 429/500/503 as answered; resets and lost answers as "no answer"; a
      // delayed request as a timeout.
      const asSeen = (f: string) => (f === 'lost-response' ? 'reset' : f);
      expect(seen).toEqual(expected.map(asSeen));
      for (const f of FAULTS) expect(proxy.counts[f], f).toBe(expected.filter((x) => x === f).length);
      expect(proxy.counts.passed).toBe(expected.filter((x) => x === 'none').length);

      // What the API server stored: everything sent on (passed, lost answers, delayed ones once
      // their delay is over), nothing the proxy answered or reset itself.
      const stored = expected.flatMap((f, i) =>
        f === 'none' || f === 'lost-response' || f === 'delay' ? [`c-${i}`] : [],
      );
      await until(
        'the delayed creates to land',
        async () => (await direct.list('PodClaim', { namespace: ns.name })).items.length >= stored.length,
        10_000,
      );
      const names = (await direct.list('PodClaim', { namespace: ns.name })).items.map((c) => c.metadata.name);
      expect(names.sort()).toEqual(stored.sort());
    } finally {
      await proxy.close();
    }
  });

  it('cuts a watch mid-stream after the time the seed gives it', async () => {
    const p = plan({ seed: 5, rate: 0, watchCutRate: 1, watchCutAfterMs: [400, 800] });
    const proxy = await startFaultProxy({ upstreamKubeconfig: e2eCluster().kubeconfigPath, dir, plan: p });
    try {
      const viaProxy = kubeClient(proxy.kubeconfigPath, { timeoutMs: 5000 });
      const t0 = Date.now();
      const events: string[] = [];
      const closed = new Promise<ApiError | undefined>((resolve) => {
        viaProxy.watch(
          'PodClaim',
          { namespace: ns.name, timeoutSeconds: 60 },
          { onEvent: (e) => events.push(e.object.metadata.name), onClose: resolve },
        );
      });
      const err = await closed;
      const ms = Date.now() - t0;
      // The watch streamed (the existing claims arrive as ADDED) and ended in an error long before
      // its server-side timeout.
      expect(events.length).toBeGreaterThan(0);
      expect(err, 'a cut is a failed watch, not a normal end').toBeDefined();
      expect(ms).toBeGreaterThanOrEqual(400);
      expect(ms).toBeLessThan(10_000);
      expect(proxy.counts.watchCuts).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

describe('fault proxy: turned off', () => {
  const ns = useTestNamespace('fault-proxy-off');
  const dir = mkdtempSync(join(tmpdir(), 'claimkit-fault-proxy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('cancels the cuts it planned and faults nothing more', async () => {
    const p = plan({ seed: 9, rate: 0, watchCutRate: 1, watchCutAfterMs: [600, 700] });
    const proxy = await startFaultProxy({ upstreamKubeconfig: e2eCluster().kubeconfigPath, dir, plan: p });
    try {
      const viaProxy = kubeClient(proxy.kubeconfigPath, { timeoutMs: 5000 });
      let closed: ApiError | undefined | 'open' = 'open';
      let events = 0;
      const stop = viaProxy.watch(
        'PodClaim',
        { namespace: ns.name, timeoutSeconds: 60 },
        { onEvent: () => events++, onClose: (e) => (closed = e) },
      );
      // The watch is streaming (a claim created now arrives through it), then the faults go off.
      await kubeClient(e2eCluster().kubeconfigPath).create({
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        metadata: { name: 'x', namespace: ns.name },
        spec: { poolName: 'none' },
      } as PodClaim);
      await until('the event through the watch', async () => events > 0, 5000);
      proxy.setFaults(false);
      await new Promise((r) => setTimeout(r, 1200));
      expect(closed).toBe('open');
      expect(proxy.counts.watchCuts).toBe(0);
      stop();
    } finally {
      await proxy.close();
    }
  });
});

function outcome(e: ApiError): string {
  switch (e.code) {
    case 429:
      return 'throttle';
    case 500:
      return 'error';
    case 503:
      return 'unavailable';
    case 0:
      return e.reason === 'Timeout' ? 'delay' : 'reset';
    default:
      return `http ${e.code}: ${e.message}`;
  }
}
