#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { MemoryPodClaimIndex } from '@claimkit/core/admission';
import { configOrExit } from '@claimkit/core/options';
import { watchNodeRuntime } from '@claimkit/kube/runtime-stats';
// The webhook on Node: read configuration, watch PodClaims, serve HTTPS. Nothing else lives here.
import { createWebhookApp } from './app.ts';
import { readTlsPair, startError, startup } from './config.ts';
import { jsonLogger } from './logger.ts';
import { createWebhookMetrics } from './metrics.ts';
import { serveNodeHttps } from './serve-node.ts';

async function main(): Promise<void> {
  const cfg = configOrExit(startup(process.argv.slice(2), process.env), process);
  await readTlsPair(cfg, (path) => readFile(path));
  const logger = jsonLogger(cfg.logLevel, undefined, undefined, cfg.logFormat).with({
    logger: 'claimkit-webhook',
  });
  // Loaded only when used (as on Deno): --help, a bad flag and `--claim-index off` never load the
  // Kubernetes client.
  const watched =
    cfg.claimIndex === 'kube'
      ? await import('./serve-claim-index.ts').then(({ kubeClientFor, watchPodClaims }) =>
          watchPodClaims(kubeClientFor(cfg.kubeconfig), logger),
        )
      : undefined;
  const index = watched?.index ?? new MemoryPodClaimIndex({ enabled: false, synced: true });
  const metrics = createWebhookMetrics();
  watchNodeRuntime(metrics.runtime);
  const app = createWebhookApp({
    metrics,
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
  process.stderr.write(`${startError(err)}\n`);
  process.exit(1);
});
