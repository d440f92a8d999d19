// Feeds a MemoryPodClaimIndex from @claimkit/kube's informer on PodClaims in every namespace (the
// one informer the controller uses too: relist on 410, resume after a watch ends, watchdog).
// Used by the entries (Node; Deno too, through its npm compatibility). Only the index's list/watch
// needs RBAC: `list` and `watch` on podclaims.claimkit.dev.
import type { ListWatcher } from '@claimkit/core';
import { MemoryPodClaimIndex } from '@claimkit/core/admission';
import {
  createKubeClient,
  Informer,
  type InformerOptions,
  type KubeClient,
  loadKubeConfig,
} from '@claimkit/kube';
import type { Logger } from './logger.ts';

export interface WatchedIndex {
  index: MemoryPodClaimIndex;
  stop(): Promise<void>;
}

/** The API client for the index: the kubeconfig file at `path`, or kubectl's defaults when ''. */
export function kubeClientFor(path: string): KubeClient {
  return createKubeClient(loadKubeConfig(path === '' ? {} : { kubeconfig: path }), {
    userAgent: 'claimkit-webhook',
    // The index reads names and pods, never the server's field-ownership bookkeeping.
    omitManagedFields: true,
  });
}

/**
 * Watches PodClaims through `source` into a new index, marked synced after the first list. A list
 * that fails (RBAC not there yet, the API server down) is retried with backoff until it works: the
 * webhook serves meanwhile and denies what needs the index.
 */
export function watchPodClaims(
  source: ListWatcher,
  log: Logger,
  opts: Pick<InformerOptions, 'timers' | 'backoffInitialMs' | 'backoffMaxMs'> = {},
): WatchedIndex {
  const index = new MemoryPodClaimIndex();
  const informer = new Informer(source, 'PodClaim', { ...opts, log, retryFirstList: true });
  informer.addHandler({
    onAdd: (o) => index.upsert(o),
    onUpdate: (_old, o) => index.upsert(o),
    onDelete: (o) => index.remove(o),
  });
  informer.start().then(
    () => {
      index.markSynced();
      log.info('claim index synced', { claims: index.size });
    },
    () => {}, // stopped before it synced: nothing failed
  );
  return {
    index,
    async stop() {
      informer.stop();
    },
  };
}
