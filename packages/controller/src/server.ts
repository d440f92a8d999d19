// /metrics, /healthz and /readyz over node:http (one server when both addresses are the same).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Manager } from './manager.ts';

export interface Endpoints {
  metrics?: { host: string; port: number };
  health?: { host: string; port: number };
}

export interface RunningServers {
  addresses: { metrics?: string; health?: string };
  close(): Promise<void>;
}

export async function serveEndpoints(mgr: Manager, ep: Endpoints): Promise<RunningServers> {
  const routes = (which: Set<'metrics' | 'health'>) =>
    createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const text = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
        res.writeHead(code, { 'content-type': type });
        res.end(body);
      };
      if (which.has('metrics') && path === '/metrics')
        return text(200, mgr.metrics.registry.render(), 'text/plain; version=0.0.4; charset=utf-8');
      // /healthz is about this process (it answers); /readyz about its view of the API server.
      if (which.has('health') && path === '/healthz') return text(200, 'ok\n');
      if (which.has('health') && path === '/readyz')
        return mgr.ready ? text(200, 'ok\n') : text(503, `${mgr.notReadyReason}\n`);
      return text(404, 'not found\n');
    });
  const servers: Server[] = [];
  const addresses: RunningServers['addresses'] = {};
  const listen = async (s: Server, a: { host: string; port: number }) => {
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(a.port, a.host, () => resolve());
    });
    servers.push(s);
    const ad = s.address() as AddressInfo;
    return `${ad.family === 'IPv6' ? `[${ad.address}]` : ad.address}:${ad.port}`;
  };
  const same =
    ep.metrics && ep.health && ep.metrics.host === ep.health.host && ep.metrics.port === ep.health.port;
  if (same) {
    const a = await listen(routes(new Set(['metrics', 'health'])), ep.metrics!);
    addresses.metrics = addresses.health = a;
  } else {
    if (ep.metrics) addresses.metrics = await listen(routes(new Set(['metrics'])), ep.metrics);
    if (ep.health) addresses.health = await listen(routes(new Set(['health'])), ep.health);
  }
  return {
    addresses,
    close: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((r) => {
              s.closeAllConnections();
              s.close(() => r());
            }),
        ),
      );
    },
  };
}
