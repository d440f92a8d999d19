// `npm start`: a local control plane (the e2e harness) with the claimkit CRDs; the namespace,
// ServiceAccounts, RBAC and admission policies of a real install; the controller and the admission
// webhook in this process, each as its ServiceAccount; the reference capture agent on
// 127.0.0.1:8750; the examples of deploy/examples. Prints how to talk to it. SIGINT, SIGTERM or
// SIGHUP stops everything, newest first, and exits 0.

import { join } from 'node:path';
import {
  CaptureAgent,
  controllerDefaults,
  jsonLogger as controllerLogger,
  createKubeController,
  serveEndpoints,
} from '@claimkit/controller';
import { API_VERSION, type PodClaim, type PodPool, podNameOf } from '@claimkit/core';
import { configOrExit } from '@claimkit/core/options';
import {
  applyObjects,
  type Clients,
  makeClients,
  readManifests,
  repoRoot,
  runPoolOnRealNode,
  startLocalCluster,
  WORKLOAD_IMAGE,
  waitFor,
} from '@claimkit/e2e/harness';
import { installWebhook } from '@claimkit/e2e/harness/webhook';
import { banner } from './start/banner.ts';
import { installIdentities, installPolicies } from './start/install.ts';
import { startStartup } from './start/options.ts';
import { podNameWrite } from './start/probes.ts';
import { Shutdown } from './start/shutdown.ts';

const say = (s: string) => process.stderr.write(`[start] ${s}\n`);
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const AGENT_PORT = 8750;

// Before anything starts: --help, or a usage error, exits at once.
const options = configOrExit(startStartup(process.argv.slice(2), process.env), process);

const shutdown = new Shutdown(say);
/** Stops what has started and exits 0; the startup below gives up at its next step. */
async function onSignal(sig: string): Promise<void> {
  if (shutdown.started) return;
  say(`${sig}: stopping the webhook, controller, agent and control plane ...`);
  await shutdown.run();
  say('stopped');
  process.exit(0);
}
const handlers = new Map(SIGNALS.map((sig) => [sig, () => void onSignal(sig)] as const));
for (const [sig, handler] of handlers) process.on(sig, handler);

class Interrupted extends Error {}
/** Between startup steps: nothing new starts once stopping has begun. */
function step(what: string): void {
  if (shutdown.started) throw new Interrupted(what);
  say(what);
}

/** The claims of the example claim set, Bound, so that the printed commands have pods to act on. */
async function exampleClaimsBound(admin: Clients): Promise<void> {
  await waitFor(
    'the example claims to bind',
    async () => {
      const list = await admin.objects.list(API_VERSION, 'PodClaim', 'default');
      const claims = list.items as PodClaim[];
      return claims.length >= 2 && claims.every((c) => c.status?.phase === 'Bound' && podNameOf(c));
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

async function start(): Promise<void> {
  const t0 = Date.now();
  const level = options.logLevel;
  step('starting the local control plane (first run builds the binaries; see apps/e2e/README.md) ...');
  const cluster = await startLocalCluster({ log: say });
  shutdown.add('control plane', () => cluster.stop(), 30_000);
  // From here the shutdown order is ours: the harness's own handlers would kill the control plane
  // before the controller and webhook stop (its exit hook and watchdog still clean up if this
  // process dies).
  for (const [sig, handler] of handlers) {
    for (const l of process.listeners(sig)) if (l !== handler) process.off(sig, l);
  }
  const admin = makeClients(cluster.kubeconfigPath);

  step('installing the namespace, ServiceAccounts and RBAC of the controller and the webhook ...');
  const ids = await installIdentities(admin, cluster.stateDir);

  step('starting the capture agent and the controller ...');
  const agent = new CaptureAgent({ durationMs: 20_000 });
  const agentUrl = (await agent.listen(AGENT_PORT, '127.0.0.1').catch(() => agent.listen(0, '127.0.0.1')))
    .url;
  shutdown.add('capture agent', () => agent.close(), 3000);
  // The shipped binary's defaults (its options table), so `npm start` runs what ships.
  const ctl = createKubeController({
    config: {
      ...controllerDefaults(),
      kubeconfig: ids.controllerKubeconfig,
      identity: 'claimkit-controller-local',
    },
    log: controllerLogger(level),
  });
  await ctl.manager.start();
  shutdown.add('controller', () => ctl.manager.stop());
  const endpoints = await serveEndpoints(ctl.manager, { metrics: { host: '127.0.0.1', port: 0 } });
  shutdown.add('metrics endpoint', () => endpoints.close(), 3000);

  step('starting the webhook ...');
  const webhook = await installWebhook({
    kubeconfigPath: cluster.kubeconfigPath,
    name: 'claimkit-local',
    indexKubeconfigPath: ids.webhookKubeconfig,
    controllerUsers: [ids.controllerUser],
    logLevel: level,
    // Before the policies exist only the webhook refuses this write; its refusal names it.
    probe: async () => {
      const refused = await podNameWrite(admin);
      if (refused?.includes('webhook.claimkit.dev')) throw new Error(refused);
    },
  });
  shutdown.add('webhook', () => webhook.stop(), 5000);

  step('installing the admission policies ...');
  await installPolicies(admin);

  step('applying deploy/examples ...');
  const onRealNode = cluster.realNode !== undefined && cluster.images.some((i) => i.ref === WORKLOAD_IMAGE);
  const examples = readManifests(join(repoRoot, 'deploy/examples')).map((o) => {
    // The example Capture calls this run's capture agent.
    const spec = (o as { spec?: { backend?: { url?: string } } }).spec;
    if (o.kind === 'Capture' && spec?.backend?.url) spec.backend.url = agentUrl;
    // The example pool's pods run for real on the real node: our workload image (no registry here),
    // counting once a second (kubectl logs shows it).
    if (o.kind === 'PodPool' && onRealNode) runPoolOnRealNode(o as unknown as PodPool);
    return o;
  });
  await applyObjects(admin, examples);
  await exampleClaimsBound(admin);

  if (shutdown.started) return;
  process.stdout.write(
    banner({
      seconds: (Date.now() - t0) / 1000,
      server: cluster.server,
      agentUrl,
      kubeconfig: cluster.kubeconfigPath,
      userKubeconfig: cluster.userKubeconfigPath,
      userName: cluster.userName,
      metrics: endpoints.addresses.metrics ?? '',
      controllerUser: ids.controllerUser,
    }),
  );
}

try {
  await start();
} catch (e) {
  // A signal during startup: its handler stops what started and exits.
  if (!(e instanceof Interrupted) && !shutdown.started) {
    say(`failed: ${e instanceof Error ? e.message : String(e)}`);
    say('stopping what started ...');
    await shutdown.run();
    process.exit(1);
  }
}
