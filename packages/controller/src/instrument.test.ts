import { type ConfigMap, intercept } from '@claimkit/core';
import { ApiModel, ManualClock } from '@claimkit/core/model';
import { describe, expect, it } from 'vitest';
import { instrumentClient, instrumentSource } from './instrument.ts';
import { ControllerMetrics } from './metrics.ts';

const NS = 'ns';
const cm = (name: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: NS, name },
  data: {},
});

describe('request counting', () => {
  it("counts every call with core's verb names and the code it got, and changes none", async () => {
    const m = new ApiModel({ clock: new ManualClock(Date.UTC(2026, 0, 1)) });
    const seen: string[] = [];
    const c = instrumentClient(m, (r) => seen.push(`${r.verb} ${r.kind} ${r.code}`));
    const a = await c.create(cm('a'));
    await c.get('ConfigMap', { namespace: NS, name: 'a' });
    await c.update({ ...a, data: { x: '1' } });
    await expect(c.update({ ...a, data: { x: '2' } })).rejects.toMatchObject({ reason: 'Conflict' });
    await c.patch('ConfigMap', { namespace: NS, name: 'a' }, { data: { y: '1' } });
    await expect(c.get('ConfigMap', { namespace: NS, name: 'gone' })).rejects.toMatchObject({
      reason: 'NotFound',
    });
    // A status write has its own verb, as in the kube client's onRequest (ConfigMaps have no status).
    await expect(
      c.patchStatus('ConfigMap', { namespace: NS, name: 'a' }, { data: { z: '1' } }),
    ).rejects.toMatchObject({ reason: 'NotFound' });
    await c.delete('ConfigMap', { namespace: NS, name: 'a' });
    expect(seen).toEqual([
      'create ConfigMap 201',
      'get ConfigMap 200',
      'update ConfigMap 200',
      'update ConfigMap 409',
      'patch ConfigMap 200',
      'get ConfigMap 404',
      'patchStatus ConfigMap 404',
      'delete ConfigMap 200',
    ]);
    expect(m.tryGetNow('ConfigMap', { namespace: NS, name: 'a' })).toBeUndefined();
  });

  it('times each request, answered or refused, into claimkit_api_request_duration_seconds by verb and resource', async () => {
    const m = new ApiModel({ clock: new ManualClock(Date.UTC(2026, 0, 1)) });
    // The server takes 30 ms over every get, answered or not.
    const slowGets = intercept(m, {
      get: async (_call, next) => {
        await new Promise((r) => setTimeout(r, 30));
        return next();
      },
    });
    const metrics = new ControllerMetrics();
    const c = instrumentClient(slowGets, (r) => metrics.apiRequest(r.verb, r.kind, r.code, r.ms));
    await c.create(cm('a'));
    await c.get('ConfigMap', { namespace: NS, name: 'a' });
    await expect(c.get('ConfigMap', { namespace: NS, name: 'gone' })).rejects.toMatchObject({
      reason: 'NotFound',
    });
    const h = metrics.apiRequestSeconds;
    expect(h.count({ verb: 'get', resource: 'ConfigMap' })).toBe(2);
    expect(h.sum({ verb: 'get', resource: 'ConfigMap' })).toBeGreaterThanOrEqual(0.055);
    expect(h.count({ verb: 'create', resource: 'ConfigMap' })).toBe(1);
    expect(h.sum({ verb: 'create', resource: 'ConfigMap' })).toBeLessThan(0.025);
    const text = metrics.registry.render();
    // Both gets took longer than 25 ms: none in the 25 ms bucket, both in the 100 ms one.
    expect(text).toContain(
      'claimkit_api_request_duration_seconds_bucket{resource="ConfigMap",verb="get",le="0.025"} 0',
    );
    expect(text).toContain(
      'claimkit_api_request_duration_seconds_bucket{resource="ConfigMap",verb="get",le="0.1"} 2',
    );
    expect(metrics.apiRequests.total({ verb: 'get', resource: 'ConfigMap', code: '404' })).toBe(1);
  });

  it('counts a watch once, with the error it was refused with at once', async () => {
    const m = new ApiModel({ clock: new ManualClock(Date.UTC(2026, 0, 1)) });
    const seen: string[] = [];
    const s = instrumentSource(m, (r) => seen.push(`${r.verb} ${r.kind} ${r.code}`));
    const closed: (string | undefined)[] = [];
    const stop = s.watch('ConfigMap', {}, { onEvent: () => {}, onClose: (e) => closed.push(e?.reason) });
    stop();
    s.watch(
      'ConfigMap',
      { resourceVersion: 'x' },
      { onEvent: () => {}, onClose: (e) => closed.push(e?.reason) },
    );
    await s.list('ConfigMap');
    expect(seen).toEqual(['watch ConfigMap 200', 'watch ConfigMap 400', 'list ConfigMap 200']);
    expect(closed).toEqual(['BadRequest']);
  });
});
