import { describe, expect, it } from 'vitest';
import { ApiModel } from '../model/api-model.ts';
import { ManualClock } from '../model/clock.ts';
import { configMap, forCreate } from '../testing/fixtures.ts';
import { ApiError } from './errors.ts';
import { intercept } from './interceptor.ts';
import type { Client, ListWatcher, WatchEvent } from './ports.ts';
import type { AnyObject, ConfigMap } from './types.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });
const model = () => new ApiModel({ clock: new ManualClock(Date.UTC(2026, 0, 1)) });

describe('intercept', () => {
  it('without hooks is the wrapped client: writes persist, errors arrive unchanged', async () => {
    const m = model();
    const c: Client = intercept(m, {});
    const created = await c.create(forCreate(configMap('a', { x: '1' })));
    await c.patch('ConfigMap', key('a'), { data: { y: '2' } });
    expect(m.getNow('ConfigMap', key('a')).data).toEqual({ x: '1', y: '2' });
    await expect(c.update({ ...created, data: { z: '3' } })).rejects.toMatchObject({ reason: 'Conflict' });
    expect((await c.list('ConfigMap', { namespace: NS })).items.map((o) => o.metadata.name)).toEqual(['a']);
    expect(await c.delete('ConfigMap', key('a'))).toBeUndefined();
    expect(m.tryGetNow('ConfigMap', key('a'))).toBeUndefined();
  });

  it('`request` sees every call with its verb, kind and key (read from the object for create and update)', async () => {
    const m = model();
    const seen: string[] = [];
    const c = intercept(m, {
      request: async (call, next) => {
        seen.push(`${call.verb} ${call.kind} ${'key' in call ? call.key.name : '-'}`);
        return next();
      },
    });
    const a = await c.create(forCreate(configMap('a')));
    await c.get('ConfigMap', key('a'));
    await c.list('ConfigMap');
    await c.update({ ...a, data: { k: 'v' } });
    await c.patch('ConfigMap', key('a'), { data: { k: 'w' } });
    await c.delete('ConfigMap', key('a'), { preconditions: { uid: a.metadata.uid! } });
    expect(seen).toEqual([
      'create ConfigMap a',
      'get ConfigMap a',
      'list ConfigMap -',
      'update ConfigMap a',
      'patch ConfigMap a',
      'delete ConfigMap a',
    ]);
  });

  it("a verb's hook runs outside `request`, may change the call, or answer without the client", async () => {
    const m = model();
    await m.create(forCreate(configMap('a')));
    const order: string[] = [];
    const c = intercept(m, {
      patch: async (call, next) => {
        order.push('patch hook');
        // Add a label to every patch.
        return next({ ...call, patch: { ...call.patch, metadata: { labels: { by: 'hook' } } } });
      },
      get: async (call, next) => (call.key.name === 'ghost' ? configMap('ghost') : next()),
      request: async (call, next) => {
        order.push(`request ${call.verb}`);
        return next();
      },
    });
    const patched = await c.patch('ConfigMap', key('a'), { data: { k: 'v' } });
    expect(patched.metadata.labels).toEqual({ by: 'hook' });
    expect(m.getNow('ConfigMap', key('a'))).toMatchObject({
      data: { k: 'v' },
      metadata: { labels: { by: 'hook' } },
    });
    expect((await c.get('ConfigMap', key('ghost'))).metadata.name).toBe('ghost');
    expect(m.tryGetNow('ConfigMap', key('ghost'))).toBeUndefined();
    expect(order).toEqual(['patch hook', 'request patch']); // the answered get never reached `request`
  });

  it('a hook that throws fails the call before the client is reached', async () => {
    const m = model();
    let left = 1;
    const c = intercept(m, {
      request: async (call, next) => {
        if (call.verb !== 'get' && call.verb !== 'list' && left-- <= 0)
          throw new ApiError('Unavailable', 'down');
        return next();
      },
    });
    await c.create(forCreate(configMap('a')));
    await expect(c.create(forCreate(configMap('b')))).rejects.toMatchObject({ reason: 'Unavailable' });
    expect(m.listNow('ConfigMap').map((o) => o.metadata.name)).toEqual(['a']);
    expect((await c.get('ConfigMap', key('a'))).metadata.name).toBe('a');
  });

  it('offers only the port methods the target has, and wraps watch handlers', async () => {
    const m = model();
    const source: ListWatcher = { list: (k, o) => m.list(k, o), watch: (k, o, h) => m.watch(k, o, h) };
    const events: string[] = [];
    const wrapped = intercept(source, {
      watch: (call, next) =>
        next({
          ...call,
          handlers: {
            ...call.handlers,
            onEvent: (e: WatchEvent<AnyObject>) => {
              events.push(`${e.type} ${e.object.metadata.name}`);
              call.handlers.onEvent(e);
            },
          },
        }),
    });
    expect(Object.keys(wrapped).sort()).toEqual(['list', 'watch']);
    const got: ConfigMap[] = [];
    const stop = wrapped.watch('ConfigMap', { namespace: NS }, { onEvent: (e) => got.push(e.object) });
    await m.create(forCreate(configMap('a')));
    stop();
    await m.create(forCreate(configMap('b')));
    expect(events).toEqual(['ADDED a']);
    expect(got.map((o) => o.metadata.name)).toEqual(['a']);
  });
});
