// The claim call over a real API server: core's claimPod with the process's timers. An application
// claims a pod of a pool and gets the pod and its address in one await (Node, Deno, Bun):
//
//   const kube = createKubeClient(loadKubeConfig());
//   await using claimed = await claimPod(kube, { pool: 'web', namespace: 'apps', timeoutMs: 30_000 });
//   const [ip] = claimed.address.podIPs;
//
// On a timeout it rejects with ClaimWaitError and the claim's own reason (PoolAtMaxPods, NoReadyPod,
// ...), the claim deleted unless `keep`; leaving the `await using` scope releases the claim.
import type { Client, Timers, Watcher } from '@claimkit/core';
import {
  type ClaimedPod,
  type ClaimPodOptions,
  claimPod as claimPodOver,
  type WaitForClaimOptions,
  waitForClaim as waitForClaimOver,
} from './claim-pod.ts';
import { realTimers } from './timers.ts';

export {
  CLAIM_POD_DEFAULT_TIMEOUT_MS,
  type ClaimedPod,
  type ClaimPodOptions,
  ClaimWaitError,
  type ClaimWaitReason,
  type WaitForClaimOptions,
} from './claim-pod.ts';

/**
 * Claims a pod of `opts.pool` through `kube` (this package's client, or any client with watch: the
 * in-memory model in tests) and resolves once it is Bound, with its address.
 */
export function claimPod(
  kube: Client & Watcher,
  opts: ClaimPodOptions & { timers?: Timers },
): Promise<ClaimedPod> {
  const { timers, ...rest } = opts;
  return claimPodOver(kube, timers ?? realTimers, rest);
}

/** Waits until the existing claim `key` is Bound (see claim-pod.ts's waitForClaim); never deletes it. */
export function waitForClaim(
  kube: Client & Watcher,
  key: { namespace: string; name: string },
  opts: WaitForClaimOptions & { timers?: Timers } = {},
): Promise<ClaimedPod> {
  const { timers, ...rest } = opts;
  return waitForClaimOver(kube, timers ?? realTimers, key, rest);
}
