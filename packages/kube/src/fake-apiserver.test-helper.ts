// A tiny real HTTP server that answers like kube-apiserver (Status bodies, watch streams), for the
// adapter's unit tests. Each test scripts the answers; every request is recorded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export type Handler = (req: Recorded, res: ServerResponse) => void | Promise<void>;

export interface FakeApiServer {
  url: string;
  requests: Recorded[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** Handlers are tried in order; the first whose matcher fits answers (once, unless sticky). */
  on(match: (r: Recorded) => boolean, handler: Handler, sticky?: boolean): void;
  kubeConfig(): KubeConfig;
  close(): Promise<void>;
}

export function status(code: number, reason: string, message: string, extra: Record<string, unknown> = {}) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...extra,
  };
}

export function json(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export async function startFakeApiServer(): Promise<FakeApiServer> {
  const requests: Recorded[] = [];
  const handlers: { match: (r: Recorded) => boolean; handler: Handler; sticky: boolean }[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const r: Recorded = {
        method: req.method ?? '',
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        body,
      };
      requests.push(r);
      open.add(res);
      res.on('close', () => open.delete(res));
      const i = handlers.findIndex((h) => h.match(r));
      if (i < 0) return json(res, 404, status(404, 'NotFound', `no handler for ${r.method} ${r.path}`));
      const h = handlers[i]!;
      if (!h.sticky) handlers.splice(i, 1);
      void h.handler(r, res);
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    connections: () => connections,
    on(match, handler, sticky = false) {
      handlers.push({ match, handler, sticky });
    },
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
        users: [{ name: 'u', token: 't0ken' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'u' }],
        currentContext: 'fake',
      });
      return kc;
    },
    async close() {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
