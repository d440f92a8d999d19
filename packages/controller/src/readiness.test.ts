// /readyz follows the API server: the Manager on core's in-memory model behind a transport that
// really fails (every request refused, open watches cut, new ones refused; or a silent partition
// that leaves watches open), served over HTTP as in the process. /healthz stays 200 throughout.
import { ApiError, type Client, intercept, type ListWatcher, type Pod } from '@claimkit/core';
import { ApiModel, schemaModelOptions } from '@claimkit/core/model';
import { afterEach, describe, expect, it } from 'vitest';
import { Manager } from './manager.ts';
import { type RunningServers, serveEndpoints } from './server.ts';
import { testConfig } from './testing/loop-harness.ts';

const NS = 'ns1';
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const refused = () => new ApiError('Unavailable', 'connect ECONNREFUSED 127.0.0.1:6443', { code: 0 });

/** The model behind a switchable outage: `down` refuses every request and watch; `cut` also ends open watches. */
function flakyTransport(m: ApiModel) {
  let down = false;
  const open = new Set<() => void>();
  const wrap = <T extends Client | ListWatcher>(target: T) =>
    intercept(target, {
      request: async (_call, next) => {
        if (down) throw refused();
        return next();
      },
      watch: (call, next) => {
        if (down) {
          queueMicrotask(() => call.handlers.onClose?.(refused()));
          return () => {};
        }
        let ended = false;
        const stop = next({
          ...call,
          handlers: {
            ...call.handlers,
            onClose: (e) => {
              ended = true;
              open.delete(cut);
              call.handlers.onClose?.(e);
            },
          },
        });
        const cut = () => {
          if (ended) return;
          ended = true;
          stop();
          call.handlers.onClose?.(refused());
        };
        open.add(cut);
        return () => {
          ended = true;
          open.delete(cut);
          stop();
        };
      },
    });
  return {
    client: wrap(m as Client) as Client,
    source: wrap(m as ListWatcher) as ListWatcher,
    outage(o: { cutWatches: boolean }) {
      down = true;
      if (o.cutWatches) for (const cut of [...open]) cut();
    },
    recover() {
      down = false;
    },
  };
}

async function until(what: string, f: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function setup() {
  const m = new ApiModel({ clock: { now: () => Date.now() }, ...schemaModelOptions() });
  const net = flakyTransport(m);
  const mgr = new Manager({
    config: testConfig({ namespace: NS, sweepInterval: 60_000, resyncInterval: 0 }),
    client: net.client,
    source: net.source,
    readiness: { probeIntervalMs: 100, recoveringProbeIntervalMs: 50 },
  });
  cleanup.push(() => mgr.stop());
  const servers: RunningServers = await serveEndpoints(mgr, { health: { host: '127.0.0.1', port: 0 } });
  cleanup.push(() => servers.close());
  const get = async (path: string) => {
    const res = await fetch(`http://${servers.addresses.health}${path}`);
    return { status: res.status, body: await res.text() };
  };
  return { m, net, mgr, get };
}

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS },
  spec: { containers: [{ name: 'main', image: 'registry.example/app:1' }] } as Pod['spec'],
});

describe('controller /readyz', () => {
  it('is 503 before the first sync, 200 once synced; /healthz is 200 from the start', async () => {
    const { mgr, get } = await setup();
    expect((await get('/healthz')).status).toBe(200);
    expect(await get('/readyz')).toEqual({ status: 503, body: 'informers not synced\n' });
    await mgr.start();
    expect(await get('/readyz')).toEqual({ status: 200, body: 'ok\n' });
  });

  it('goes unready when the API server is lost (watches cut) and ready once the informers have synced again', async () => {
    const { m, net, mgr, get } = await setup();
    await mgr.start();
    expect(mgr.ready).toBe(true);

    net.outage({ cutWatches: true });
    await until('not ready', () => !mgr.ready);
    const during = await get('/readyz');
    expect(during.status).toBe(503);
    expect(during.body).toMatch(/ECONNREFUSED/);
    expect((await get('/healthz')).status).toBe(200);
    // It stays unready for as long as the server is gone (the probe keeps failing).
    await until('several failed probes', async () => (await get('/readyz')).status === 503, 300);
    await new Promise((r) => setTimeout(r, 300));
    expect(mgr.ready).toBe(false);

    // The world moves on meanwhile; after the outage the informers must see it.
    await m.create(pod('made-during-outage'));
    net.recover();
    await until('ready again', () => mgr.ready);
    expect(await get('/readyz')).toEqual({ status: 200, body: 'ok\n' });
    await until('the cache has what happened during the outage', () =>
      Boolean(mgr.cache.informer('Pod')?.get({ namespace: NS, name: 'made-during-outage' })),
    );
  });

  it('a silent partition (watches left open, requests refused) is found by the probe', async () => {
    const { net, mgr, get } = await setup();
    await mgr.start();
    net.outage({ cutWatches: false });
    await until('not ready', () => !mgr.ready);
    expect((await get('/readyz')).body).toMatch(/^API server unreachable: .*ECONNREFUSED/);
    net.recover();
    await until('ready again', () => mgr.ready);
  });

  it('is 503 after stop()', async () => {
    const { mgr, get } = await setup();
    await mgr.start();
    await mgr.stop();
    expect((await get('/readyz')).status).toBe(503);
    expect((await get('/healthz')).status).toBe(200);
  });
});
