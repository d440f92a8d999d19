// Serves claimkit's admission webhook from this process over TLS on 127.0.0.1 and registers it
// with the API server by URL (with its caBundle), for one namespace (a suite) or every namespace but
// the system ones (`npm start`). Removed on stop, so a failurePolicy: Fail webhook never outlives
// its user. Local provider only: an API server elsewhere cannot reach this process.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createWebhookApp,
  jsonLogger,
  type LogLevel,
  validatingWebhookConfiguration,
} from '@claimkit/webhook';
import { kubeClientFor, type WatchedIndex, watchPodClaims } from '@claimkit/webhook/serve-claim-index';
import { type RunningServer, serveNodeHttps } from '@claimkit/webhook/serve-node';
import { makeClients } from './kube.ts';
import { loopbackServingCert } from './pki.ts';
import { waitFor } from './wait.ts';

export interface InstalledWebhook {
  port: number;
  /** The webhook's watched claim index (to wait until it has seen a write). */
  index: WatchedIndex['index'];
  stop(): Promise<void>;
}

export async function installWebhook(opts: {
  /** Registers the configuration (cluster-admin). */
  kubeconfigPath: string;
  /** The only namespace sent to the webhook; without one, every namespace but the system ones. */
  namespace?: string;
  /** The configuration's name. Default `claimkit-e2e-<namespace>`. */
  name?: string;
  /** The identity the claim index lists and watches PodClaims as. Default: kubeconfigPath's. */
  indexKubeconfigPath?: string;
  /** Usernames allowed to write claim spec fields (the controller's identity). */
  controllerUsers: string[];
  /** A write the webhook must refuse, used to know the API server has picked the configuration up. */
  probe: () => Promise<unknown>;
  /** Default warn. */
  logLevel?: LogLevel;
}): Promise<InstalledWebhook> {
  const dir = mkdtempSync(join(tmpdir(), 'claimkit-e2e-webhook-'));
  const { certFile, keyFile } = loopbackServingCert(dir);
  const logger = jsonLogger(opts.logLevel ?? 'warn', (l) => process.stderr.write(`[webhook] ${l}\n`));
  const watched: WatchedIndex = watchPodClaims(
    kubeClientFor(opts.indexKubeconfigPath ?? opts.kubeconfigPath),
    logger,
    { backoffInitialMs: 1000, backoffMaxMs: 1000 },
  );
  const app = createWebhookApp({
    controller: { usernames: opts.controllerUsers },
    index: watched.index,
    logger,
  });
  const server: RunningServer = await serveNodeHttps({
    fetch: app.fetch,
    port: 0,
    host: '127.0.0.1',
    certFile,
    keyFile,
    logger,
  });
  const admission = makeClients(opts.kubeconfigPath).admission;
  const name = opts.name ?? `claimkit-e2e-${opts.namespace ?? 'all'}`;
  const stop = async () => {
    await admission.deleteValidatingWebhookConfiguration({ name }).catch(() => {});
    await watched.stop();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('the webhook claim index to sync', () => watched.index.synced(), { timeoutMs: 30_000 });
    const body = validatingWebhookConfiguration({
      name,
      clientConfig: (path) => ({
        url: `https://127.0.0.1:${server.port}${path}`,
        caBundle: readFileSync(certFile).toString('base64'),
      }),
      ...(opts.namespace
        ? { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': opts.namespace } } }
        : {}),
      timeoutSeconds: 10,
    });
    await admission.createValidatingWebhookConfiguration({ body: body as never });
    await waitFor(
      'the API server to call the webhook',
      async () => {
        try {
          await opts.probe();
          return false;
        } catch (e) {
          return String((e as Error)?.message ?? e).includes('claimkit');
        }
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { port: server.port, index: watched.index, stop };
}
