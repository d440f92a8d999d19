// The webhook's watched claim index over core's in-memory ApiModel (the same informer the
// controller runs): synced only after a list that worked, kept current through watch events,
// relists and watches the server ends, and stopped cleanly.
import { ApiError } from '@claimkit/core';
import { ApiModel } from '@claimkit/core/model';
import { boundTo, FakeTimers, inNamespace, migratingFrom, podClaim, put } from '@claimkit/core/testing';
import { describe, expect, it } from 'vitest';
import { silentLogger } from './logger.ts';
import { watchPodClaims } from './serve-claim-index.ts';

const flush = () => new Promise<void>((r) => setImmediate(r));
const names = (refs: { name: string }[]) => refs.map((r) => r.name).sort();

describe('watchPodClaims', () => {
  it('is not synced while listing is forbidden; syncs once RBAC is granted; follows claims after that', async () => {
    const m = new ApiModel({ eventWindow: 10 });
    await put(m, podClaim('a', inNamespace('ns'), boundTo('p1', 'n1')));
    const stopForbidden = m.faults.inject({ verbs: ['list'], reason: 'Forbidden' });
    const timers = new FakeTimers();
    const warnings: string[] = [];
    const watched = watchPodClaims(m, { ...silentLogger, warn: (msg) => warnings.push(msg) }, { timers });
    try {
      await flush();
      timers.advance(10_000);
      await flush();
      expect(watched.index.synced()).toBe(false);
      expect(warnings.length).toBeGreaterThanOrEqual(2);
      expect(warnings.every((w) => w === 'list failed; retrying')).toBe(true);

      stopForbidden(); // the ClusterRoleBinding arrives
      timers.advance(30_000);
      await flush();
      expect(watched.index.synced()).toBe(true);
      expect(names(watched.index.claimsReferencing('ns', 'p1'))).toEqual(['a']);

      // A migration: the new claim holds both pods through status.podName and status.sourcePod.
      await put(m, podClaim('b', inNamespace('ns'), boundTo('p2', 'n1'), migratingFrom('p3')));
      expect(names(watched.index.claimsReferencing('ns', 'p3'))).toEqual(['b']);
      await m.delete('PodClaim', { namespace: 'ns', name: 'a' });
      expect(watched.index.claimsReferencing('ns', 'p1')).toEqual([]);

      // The watch fails; while it backs off the window moves on and a claim changes: the relist catches up.
      m.closeWatches({ error: new ApiError('Unavailable', 'apiserver restarting') });
      await m.patchStatus('PodClaim', { namespace: 'ns', name: 'b' }, { status: { sourcePod: null } });
      for (let i = 0; i < 12; i++) {
        await m.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'x', name: `n${i}` } });
      }
      timers.advance(30_000);
      await flush();
      expect(watched.index.claimsReferencing('ns', 'p3')).toEqual([]);
      expect(names(watched.index.claimsReferencing('ns', 'p2'))).toEqual(['b']);
    } finally {
      await watched.stop();
    }
    expect(m.openWatches).toBe(0);
  });
});
