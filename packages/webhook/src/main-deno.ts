// The webhook on Deno: read configuration, watch PodClaims, serve HTTPS with Deno.serve.
// From an installed package (README.md, "Deno"):
//   deno run -A node_modules/@claimkit/webhook/dist/main-deno.js --tls-cert-file ... [flags]
// In the workspace, from packages/webhook (the sources, through the project's own export condition):
//   deno run --node-modules-dir=manual --conditions=@claimkit/source -A src/main-deno.ts ... [flags]
// The certificate is reloaded when its files change: the listener is shut down gracefully and a new
// one started on the same port with the new pair (a gap of milliseconds; overlapping them would need
// reusePort, which Deno gates behind --unstable-net and which is fatal without it).
// The PodClaim index uses @kubernetes/client-node through Deno's npm compatibility; `--claim-index off`
// runs without it (pod-reference checks are then skipped with a warning).

import { MemoryPodClaimIndex } from '@claimkit/core/admission';
import { createWebhookApp } from './app.ts';
import { readTlsPair, startError, startup } from './config.ts';
import { jsonLogger } from './logger.ts';

// The part of the Deno namespace this file uses (so the Node typecheck and build accept it).
interface DenoServer {
  finished: Promise<void>;
  shutdown(): Promise<void>;
  addr: { port: number };
}
declare const Deno: {
  args: string[];
  env: { toObject(): Record<string, string> };
  readTextFile(path: string): Promise<string>;
  stdout: { writeSync(bytes: Uint8Array): number };
  watchFs(paths: string[]): AsyncIterable<{ kind: string; paths: string[] }>;
  serve(
    opts: {
      port: number;
      hostname: string;
      cert: string;
      key: string;
      onListen?: (addr: { port: number }) => void;
    },
    handler: (req: Request) => Response | Promise<Response>,
  ): DenoServer;
  addSignalListener(signal: 'SIGTERM' | 'SIGINT', fn: () => void): void;
  exit(code: number): never;
};

const start = startup(Deno.args, Deno.env.toObject());
if ('help' in start) {
  Deno.stdout.writeSync(new TextEncoder().encode(start.help));
  Deno.exit(0);
}
if ('error' in start) {
  console.error(start.error);
  Deno.exit(2);
}
const cfg = start.config;
function fail(err: unknown): never {
  console.error(startError(err));
  return Deno.exit(1);
}
await readTlsPair(cfg, (path) => Deno.readTextFile(path)).catch(fail);
const logger = jsonLogger(cfg.logLevel, undefined, undefined, cfg.logFormat).with({
  logger: 'claimkit-webhook',
});
let stopIndex = async () => {};
let index = new MemoryPodClaimIndex({ enabled: false, synced: true });
if (cfg.claimIndex === 'kube') {
  const { kubeClientFor, watchPodClaims } = await import('./serve-claim-index.ts');
  const watched = watchPodClaims(kubeClientFor(cfg.kubeconfig), logger);
  index = watched.index;
  stopIndex = watched.stop;
}
const app = createWebhookApp({
  controller: { usernames: cfg.controllerUsers, groups: cfg.controllerGroups },
  index,
  logger,
});

async function listen(old?: DenoServer): Promise<{ server: DenoServer; pair: string }> {
  const [cert, key] = await Promise.all([Deno.readTextFile(cfg.certFile), Deno.readTextFile(cfg.keyFile)]);
  await old?.shutdown();
  const server = Deno.serve({ port: cfg.port, hostname: cfg.host, cert, key, onListen: () => {} }, app.fetch);
  logger.info('webhook listening', { port: server.addr.port, host: cfg.host, runtime: 'deno' });
  return { server, pair: cert + key };
}

let current = await listen().catch(fail);
cfg.port = current.server.addr.port; // a reload binds the same port even when 0 was asked for
(async () => {
  for await (const _ of Deno.watchFs([cfg.certFile, cfg.keyFile])) {
    try {
      const [cert, key] = await Promise.all([
        Deno.readTextFile(cfg.certFile),
        Deno.readTextFile(cfg.keyFile),
      ]);
      if (cert + key === current.pair) continue;
      current = await listen(current.server);
      logger.info('TLS certificate reloaded', { certFile: cfg.certFile });
    } catch (err) {
      logger.warn('TLS certificate reload skipped', { error: String(err) });
    }
  }
})();

const shutdown = async (signal: string) => {
  logger.info('shutting down', { signal });
  await Promise.all([current.server.shutdown(), stopIndex()]);
  Deno.exit(0);
};
Deno.addSignalListener('SIGTERM', () => void shutdown('SIGTERM'));
Deno.addSignalListener('SIGINT', () => void shutdown('SIGINT'));
