#!/usr/bin/env node
// claimkit-controller: the reconcilers of Captures, PodPools, PodClaims and PodClaimSets.
import { CLAIMKIT_VERSION } from '@claimkit/core';
import { configOrExit } from '@claimkit/core/options';
import { clientNodeDeferred, clientNodeSlimmed } from '@claimkit/kube';
import { type ControllerConfig, controllerStartup, parseAddr } from './flags.ts';
import { applyHeapFlags } from './heap-flags.ts';
import { jsonLogger } from './log.ts';
import { serveEndpoints } from './server.ts';
import { maxWorkers } from './worker-surge.ts';

function die(msg: string, code: number): never {
  process.stderr.write(`claimkit-controller: ${msg}\n`);
  process.exit(code);
}

// The image's heap growth cap also when the npm bin runs under a plain `node` (heap-flags.ts).
applyHeapFlags();
const flags: ControllerConfig = configOrExit(controllerStartup(process.argv.slice(2), process.env), process);

const log = jsonLogger(flags.logLevel, undefined, undefined, flags.logFormat).with({
  logger: 'claimkit-controller',
});
// Loaded after the flags: --help and a bad flag answer without loading the Kubernetes client.
const { createKubeController, explainStartError } = await import('./runtime.ts');
let ctl: ReturnType<typeof createKubeController>;
try {
  ctl = createKubeController({ config: flags, log });
} catch (e) {
  die(explainStartError(e), 1);
}
const { manager, server } = ctl;
const servers = await serveEndpoints(manager, {
  ...(parseAddr('metrics-addr', flags.metricsAddr)
    ? { metrics: parseAddr('metrics-addr', flags.metricsAddr)! }
    : {}),
  ...(parseAddr('health-addr', flags.healthAddr)
    ? { health: parseAddr('health-addr', flags.healthAddr)! }
    : {}),
}).catch((e: Error) => die(`cannot listen: ${e.message}`, 1));

let stopping = false;
async function shutdown(sig: string) {
  if (stopping) return;
  stopping = true;
  log.info('signal received; shutting down', { signal: sig });
  await manager.stop();
  await servers.close();
  process.exit(0);
}
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void shutdown(sig));

log.info('starting', {
  version: CLAIMKIT_VERSION,
  server,
  namespace: flags.namespace ?? '(all)',
  leaderElect: flags.leaderElect,
  identity: flags.identity,
  pod: flags.pod ? `${flags.pod.namespace}/${flags.pod.name}` : '(none)',
  concurrency: flags.concurrency,
  maxConcurrency: maxWorkers(flags.concurrency, flags.maxConcurrency),
  sweepIntervalMs: flags.sweepInterval,
  watchNodes: flags.watchNodes,
  disableClaimEvents: flags.disableClaimEvents,
  otlpEndpoint: flags.otlpEndpoint ?? '(none: tracing off)',
  // client-node's generated API index is left unloaded on Node, and its proxy and fetch packages
  // wait for first use (@claimkit/kube's client-node-slim.ts).
  clientNodeApiIndex: clientNodeSlimmed() ? 'not loaded' : 'loaded',
  clientNodeDeferred: clientNodeDeferred(),
  ...servers.addresses,
});
try {
  await manager.start();
} catch (e) {
  await servers.close();
  die(explainStartError(e, server), 1);
}
