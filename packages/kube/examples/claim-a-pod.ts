import type { Client, Watcher } from '@claimkit/core';
import { ClaimWaitError, claimPod } from '@claimkit/kube';

// Claim a warm pod of pool `web`, learn where it is, use it, and release it when done.
export async function useAWarmPod(kube: Client & Watcher): Promise<string> {
  try {
    await using claimed = await claimPod(kube, { pool: 'web', namespace: 'apps', timeoutMs: 30_000 });
    const [ip] = claimed.address.podIPs;
    const port = claimed.ports.find((p) => p.name === 'http')?.containerPort ?? 8080;
    claimed.onLost(() => console.warn(`pod ${claimed.pod.metadata.name} was lost`));
    return `http://${ip}:${port}/`; // ... talk to the pod; leaving the block releases the claim
  } catch (e) {
    // No pod in time: the claim's own reason (PoolAtMaxPods, NoReadyPod, ...); the claim is deleted.
    if (e instanceof ClaimWaitError) return `no pod: ${e.reason}`;
    throw e;
  }
}
