// `npm start`: a local control plane (apps/e2e harness), the claimkit CRDs, the controller and the
// admission webhook in this process, the reference capture agent on 127.0.0.1:8750, and the
// examples of deploy/examples applied. Prints how to talk to it; Ctrl-C stops everything.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CaptureAgent,
  jsonLogger as controllerLogger,
  createKubeController,
  serveEndpoints,
} from '@claimkit/controller';
import { createWebhookApp, jsonLogger, validatingWebhookConfiguration } from '@claimkit/webhook';
import { kubeClientFor, watchPodClaims } from '@claimkit/webhook/serve-claim-index';
import { serveNodeHttps } from '@claimkit/webhook/serve-node';
import { applyObjects, makeClients, readManifests, startLocalCluster } from './harness/index.ts';
import { E2E_USER, loopbackServingCert } from './harness/pki.ts';

const root = new URL('../../../', import.meta.url).pathname;
const say = (s: string) => process.stderr.write(`[start] ${s}\n`);
const verbose = process.env.CLAIMKIT_LOG_LEVEL ?? 'warn';
const t0 = Date.now();

say('starting the local control plane (first run builds the binaries; see apps/e2e/README.md) ...');
const cluster = await startLocalCluster({ log: (m) => say(m) });
const kubeconfig = cluster.kubeconfigPath;
const clients = makeClients(kubeconfig);
const ADMIN = 'claimkit-e2e-admin';

// The capture agent of the example Capture.
const agent = new CaptureAgent({ durationMs: 20_000 });
let agentUrl: string;
try {
  agentUrl = (await agent.listen(8750, '127.0.0.1')).url;
} catch {
  agentUrl = (await agent.listen(0, '127.0.0.1')).url;
}

// The controller (the admin identity plays its service account).
const ctl = createKubeController({
  kubeconfig,
  concurrency: 4,
  identity: 'claimkit-controller-local',
  log: controllerLogger(verbose as 'warn'),
});
const endpoints = await serveEndpoints(ctl.manager, { metrics: { host: '127.0.0.1', port: 0 } });
await ctl.manager.start();

// The webhook over TLS on loopback, registered by URL with its caBundle, for every namespace but the
// system ones. It trusts the controller's identity (here the admin client certificate).
const dir = mkdtempSync(join(tmpdir(), 'claimkit-start-'));
const { certFile, keyFile } = loopbackServingCert(dir);
const wlog = jsonLogger(verbose as 'warn', (l) => process.stderr.write(`[webhook] ${l}\n`));
const watched = watchPodClaims(kubeClientFor(kubeconfig), wlog, {
  backoffInitialMs: 1000,
  backoffMaxMs: 1000,
});
const app = createWebhookApp({ controller: { usernames: [ADMIN] }, index: watched.index, logger: wlog });
const webhook = await serveNodeHttps({
  fetch: app.fetch,
  port: 0,
  host: '127.0.0.1',
  certFile,
  keyFile,
  logger: wlog,
});
const admission = clients.admission;
const cfgName = 'claimkit-local';
const caBundle = readFileSync(certFile).toString('base64');
await admission.createValidatingWebhookConfiguration({
  body: validatingWebhookConfiguration({
    name: cfgName,
    clientConfig: (path) => ({ url: `https://127.0.0.1:${webhook.port}${path}`, caBundle }),
    timeoutSeconds: 10,
  }) as never,
});

// The examples (the Capture pointed at this run's agent).
const examples = readManifests(join(root, 'deploy/examples')).map((o) => {
  const spec = (o as { spec?: { backend?: { url?: string } } }).spec;
  if (o.kind === 'Capture' && spec?.backend?.url) spec.backend.url = agentUrl;
  return o;
});
for (let i = 0; ; i++) {
  try {
    await applyObjects(clients, examples);
    break;
  } catch (e) {
    if (i > 40) throw e;
    await new Promise((r) => setTimeout(r, 250)); // the webhook configuration takes a moment
  }
}

process.stdout.write(`
claimkit is running (${((Date.now() - t0) / 1000).toFixed(1)} s): control plane ${cluster.server}, controller, webhook, capture agent ${agentUrl}

export KUBECONFIG=${kubeconfig}

  kubectl get podpools,podclaimsets,podclaims,captures
  kubectl get pods -L claimkit.dev/state,claimkit.dev/claimed-by
  kubectl scale podclaimset/web-claims --replicas=3
  kubectl delete pod "$(kubectl get podclaims -o jsonpath='{.items[0].spec.podName}')"   # the claim goes Lost and binds again
  kubectl annotate podclaim "$(kubectl get podclaims -o jsonpath='{.items[0].metadata.name}')" claimkit.dev/migrate=try
  kubectl get capture web-snapshot -o yaml      # delete its holder pod mid-capture: taken over at once
  node --conditions=source packages/cli/src/main.ts doctor -A
  curl -s http://${endpoints.addresses.metrics}/metrics | grep ^claimkit_
  kubectl get events --field-selector source=claimkit-controller

(the non-admin identity ${E2E_USER}: --kubeconfig ${cluster.userKubeconfigPath}; logs: CLAIMKIT_LOG_LEVEL=info npm start)
Ctrl-C stops everything.
`);

let stopping = false;
/** One shutdown step, bounded: a component that hangs must not keep Ctrl-C from finishing. */
async function step(what: string, p: () => Promise<unknown>, ms = 10_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), ms);
  });
  const res = await Promise.race([p().catch(() => undefined), timedOut]);
  clearTimeout(timer);
  if (res === 'timeout') say(`${what}: did not finish in ${ms / 1000} s; going on`);
}
async function stop(sig: string) {
  if (stopping) return;
  stopping = true;
  say(`${sig}: stopping the controller, webhook, agent and control plane ...`);
  await step('controller', () => ctl.manager.stop());
  await step(
    'webhook configuration',
    () => admission.deleteValidatingWebhookConfiguration({ name: cfgName }),
    3000,
  );
  await step('webhook', () => Promise.all([webhook.close(), watched.stop()]), 3000);
  await step('endpoints and agent', () => Promise.all([endpoints.close(), agent.close()]), 3000);
  await step('control plane', () => cluster.stop(), 30_000);
  say('stopped');
  process.exit(0);
}
// Shutdown order is ours: the controller and webhook stop while the API server still answers, then
// the control plane. (The harness's own handlers would kill the control plane first; its exit hook
// and watchdog still clean up if this process dies.)
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  for (const l of process.listeners(sig)) process.removeListener(sig, l);
  process.on(sig, () => void stop(sig));
}
