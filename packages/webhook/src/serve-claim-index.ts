// Feeds a MemoryPodClaimIndex from a @kubernetes/client-node informer on PodClaims in every namespace.
// Used by the entries (Node; Deno too, through its npm compatibility). Only the index's list/watch
// needs RBAC: `list` and `watch` on podclaims.claimkit.dev.
import { API_VERSION, GROUP, KIND_INFO, VERSION } from '@claimkit/core';
import { CustomObjectsApi, KubeConfig, type KubernetesObject, makeInformer } from '@kubernetes/client-node';
import { MemoryPodClaimIndex } from './claim-index.ts';
import type { Logger } from './logger.ts';

export interface WatchedIndex {
  index: MemoryPodClaimIndex;
  stop(): Promise<void>;
}

export function loadKubeConfig(path: string): KubeConfig {
  const kc = new KubeConfig();
  if (path !== '') kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

export function watchPodClaims(kc: KubeConfig, log: Logger, retryMs = 5000): WatchedIndex {
  const index = new MemoryPodClaimIndex();
  const plural = KIND_INFO.PodClaim.plural;
  const api = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer<KubernetesObject>(
    kc,
    `/apis/${API_VERSION}/${plural}`,
    () =>
      api.listCustomObjectForAllNamespaces({
        group: GROUP,
        version: VERSION,
        resourcePlural: plural,
      }) as never,
  );
  informer.on('add', (o) => index.upsert(o));
  informer.on('update', (o) => index.upsert(o));
  informer.on('delete', (o) => index.remove(o));
  let stopped = false;
  let failed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const retry = (what: string, err: unknown) => {
    // Stopping aborts the watch, which client-node reports as an error too: nothing failed.
    if (stopped) return;
    failed = true;
    log.warn(`claim index ${what} failed; retrying`, { error: String(err) });
    if (!stopped && timer === undefined) {
      timer = setTimeout(() => {
        timer = undefined;
        start();
      }, retryMs);
    }
  };
  const start = () => {
    failed = false;
    informer.start().then(
      () => {
        // A failed list is reported through 'error' and start() still resolves: synced only when not.
        if (failed || index.synced()) return;
        index.markSynced();
        log.info('claim index synced', { claims: index.size });
      },
      (err: unknown) => retry('list', err),
    );
  };
  informer.on('error', (err: unknown) => retry('watch', err));
  start();
  return {
    index,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await informer.stop();
    },
  };
}
