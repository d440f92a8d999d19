import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts, portInUse, restartSafePortRange } from './ports.ts';

describe('control plane ports', () => {
  it('come from below the ephemeral range, so a restarted component gets its port back', async () => {
    const [lo, hi] = restartSafePortRange();
    expect(hi).toBeLessThan(32768);
    expect(lo).toBeGreaterThanOrEqual(1024);
    const ports = await freePorts(6);
    expect(new Set(ports).size).toBe(6);
    for (const p of ports) {
      expect(p).toBeGreaterThanOrEqual(lo);
      expect(p).toBeLessThanOrEqual(hi);
      expect(await portInUse(p)).toBe(false);
    }
  });

  it('skip a port that is taken', async () => {
    const [lo, hi] = restartSafePortRange();
    const [p] = (await freePorts(1)) as [number];
    const taken = createServer();
    await new Promise<void>((r) => taken.listen({ host: '127.0.0.1', port: p }, () => r()));
    try {
      // The first pick is the taken port; the next ones land elsewhere.
      let calls = 0;
      const pickTaken = (p - lo + 0.5) / (hi - lo + 1);
      const ports = await freePorts(1, () => (calls++ === 0 ? pickTaken : Math.random()));
      expect(calls).toBeGreaterThan(1);
      expect(ports).toHaveLength(1);
      expect(ports).not.toContain(p);
    } finally {
      taken.close();
    }
  });
});
