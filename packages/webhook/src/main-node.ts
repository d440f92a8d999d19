#!/usr/bin/env node
// The webhook on Node: read configuration, watch PodClaims, serve HTTPS. Nothing else lives here.
import { createWebhookApp } from './app.ts';
import { MemoryPodClaimIndex } from './claim-index.ts';
import { ConfigError, parseConfig } from './config.ts';
import { jsonLogger } from './logger.ts';
import { kubeClientFor, watchPodClaims } from './serve-claim-index.ts';
import { serveNodeHttps } from './serve-node.ts';

async function main(): Promise<void> {
  let cfg: ReturnType<typeof parseConfig>;
  try {
    cfg = parseConfig(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(err.message.startsWith('claimkit-webhook:') ? 0 : 2);
  }
  const logger = jsonLogger(cfg.logLevel).with({ logger: 'claimkit-webhook' });
  const watched =
    cfg.claimIndex === 'kube' ? watchPodClaims(kubeClientFor(cfg.kubeconfig), logger) : undefined;
  const index = watched?.index ?? new MemoryPodClaimIndex({ enabled: false, synced: true });
  const app = createWebhookApp({
    controller: { usernames: cfg.controllerUsers, groups: cfg.controllerGroups },
    index,
    logger,
  });
  const server = await serveNodeHttps({
    fetch: app.fetch,
    port: cfg.port,
    host: cfg.host,
    certFile: cfg.certFile,
    keyFile: cfg.keyFile,
    logger,
  });
  const shutdown = async (signal: string) => {
    logger.info('shutting down', { signal });
    await Promise.all([server.close(), watched?.stop()]);
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
