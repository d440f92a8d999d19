// Serves a fetch handler over HTTPS on Node with @hono/node-server, reloading the certificate and key
// when their files change (a Secret volume swaps a symlink, so the directories are watched, and a
// slow poll backs the watch up). A half-written pair is ignored until it parses.
import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import { serve } from '@hono/node-server';
import type { Logger } from './logger.ts';

export interface NodeServeOptions {
  fetch: (req: Request) => Response | Promise<Response>;
  port: number;
  host: string;
  certFile: string;
  keyFile: string;
  logger: Logger;
  /** Poll interval backing up fs.watch (ms); default 10 s. */
  pollMs?: number;
  /** How long an idle keep-alive connection stays open (ms); default {@link KEEP_ALIVE_TIMEOUT_MS}. */
  keepAliveTimeoutMs?: number;
}

/**
 * The API server's webhook client keeps idle connections for 90 s (Go's http.Transport defaults in
 * k8s.io/apimachinery). Node closes them after 5 s, so the client keeps picking sockets the server is
 * closing (EOF errors, which `failurePolicy: Fail` turns into denied writes) and opening new TLS
 * connections in bursts; in the benchmark such a burst cost ~100 ms at p99. So stay open longer
 * than the client does.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;

export interface RunningServer {
  port: number;
  reloads(): number;
  close(): Promise<void>;
}

export async function serveNodeHttps(opts: NodeServeOptions): Promise<RunningServer> {
  let cert = await readFile(opts.certFile);
  let key = await readFile(opts.keyFile);
  let reloads = 0;
  const server = serve({
    fetch: opts.fetch,
    port: opts.port,
    hostname: opts.host,
    createServer,
    serverOptions: { cert, key },
  }) as Server;
  await new Promise<void>((resolve, reject) => {
    if (server.listening) resolve();
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = opts.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS;
  const port = (server.address() as AddressInfo).port;
  opts.logger.info('webhook listening', { port, host: opts.host, runtime: `node ${process.version}` });

  let pending: ReturnType<typeof setTimeout> | undefined;
  const reload = async () => {
    try {
      const [c, k] = await Promise.all([readFile(opts.certFile), readFile(opts.keyFile)]);
      if (c.equals(cert) && k.equals(key)) return;
      createSecureContext({ cert: c, key: k }); // throws on a mismatched or half-written pair
      server.setSecureContext({ cert: c, key: k });
      cert = c;
      key = k;
      reloads++;
      opts.logger.info('TLS certificate reloaded', { certFile: opts.certFile });
    } catch (err) {
      opts.logger.warn('TLS certificate reload skipped', { error: String(err) });
    }
  };
  const schedule = () => {
    if (pending !== undefined) clearTimeout(pending);
    pending = setTimeout(() => {
      pending = undefined;
      void reload();
    }, 100);
  };
  const watchers = [...new Set([dirname(opts.certFile), dirname(opts.keyFile)])].map((d) => {
    const w = watch(d, schedule);
    w.on('error', (err) => opts.logger.warn('certificate watch failed', { dir: d, error: String(err) }));
    return w;
  });
  const poll = setInterval(() => void reload(), opts.pollMs ?? 10_000);
  poll.unref();

  return {
    port,
    reloads: () => reloads,
    close: async () => {
      clearInterval(poll);
      if (pending !== undefined) clearTimeout(pending);
      for (const w of watchers) w.close();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
