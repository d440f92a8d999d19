// Holder liveness, by pod name AND UID (seed: capture-claim-dead-owner). Only a definite answer
// makes a holder dead; anything we could not find out keeps the claim.
import { getOrUndefined } from '../api/errors.ts';
import { isPodFinished } from '../api/pod-predicates.ts';
import type { Reader } from '../api/ports.ts';
import type { ContainerStatus, Pod, PodRef } from '../api/types.ts';

/** What a live lookup of the holder pod returned, as plain data. */
export type HolderLookup = { found: true; pod: Pod } | { found: false } | { error: string };

export type Liveness =
  | { state: 'alive' }
  | { state: 'dead'; reason: 'HolderGone' | 'HolderReplaced' | 'HolderTerminating' | 'HolderFinished' }
  | { state: 'unknown'; reason: string };

export function classifyHolder(holder: PodRef, lookup: HolderLookup | undefined): Liveness {
  if (lookup === undefined) return { state: 'unknown', reason: 'no liveness check' };
  if ('error' in lookup) return { state: 'unknown', reason: lookup.error };
  if (!lookup.found) return { state: 'dead', reason: 'HolderGone' };
  const pod = lookup.pod;
  if (pod.metadata.uid !== holder.uid) return { state: 'dead', reason: 'HolderReplaced' };
  if (pod.metadata.deletionTimestamp) return { state: 'dead', reason: 'HolderTerminating' };
  if (isPodFinished(pod)) return { state: 'dead', reason: 'HolderFinished' };
  return { state: 'alive' };
}

/**
 * The container of a holder pod that held something (a leader Lease): its name and, when the holder
 * knew them, the containerID and restartCount of the incarnation that was running then.
 */
export interface HolderContainer {
  name: string;
  containerID?: string;
  restartCount?: number;
}

export type ContainerLiveness =
  | { state: 'alive' }
  | { state: 'dead'; reason: 'HolderContainerTerminated' | 'HolderContainerRestarted' }
  | { state: 'unknown'; reason: string };

/**
 * Whether the recorded incarnation of `c` still runs in `pod` (a pod `classifyHolder` found alive).
 * Dead only on a definite answer: a higher restartCount or another containerID than recorded (the
 * kubelet started a new container), or the recorded container terminated. With nothing recorded to
 * compare, or no status for the container, the answer is unknown (a status from before the holder
 * started must never make it dead).
 */
export function classifyHolderContainer(pod: Pod, c: HolderContainer): ContainerLiveness {
  const s: ContainerStatus | undefined = pod.status?.containerStatuses?.find((x) => x.name === c.name);
  if (!s) return { state: 'unknown', reason: `no status for container ${c.name}` };
  if (c.containerID === undefined && c.restartCount === undefined) {
    return { state: 'unknown', reason: `no incarnation of container ${c.name} recorded` };
  }
  if (c.restartCount !== undefined && s.restartCount !== undefined && s.restartCount > c.restartCount) {
    return { state: 'dead', reason: 'HolderContainerRestarted' };
  }
  if (c.containerID) {
    if (s.containerID && s.containerID !== c.containerID) {
      return { state: 'dead', reason: 'HolderContainerRestarted' };
    }
    if (s.containerID === c.containerID && s.state?.terminated) {
      return { state: 'dead', reason: 'HolderContainerTerminated' };
    }
    // Waiting to restart: the terminated one is the last state.
    if (s.lastState?.terminated?.containerID === c.containerID && !s.state?.running) {
      return { state: 'dead', reason: 'HolderContainerTerminated' };
    }
    if (s.containerID === c.containerID && s.state?.running) return { state: 'alive' };
    return { state: 'unknown', reason: `container ${c.name} is neither running nor terminated` };
  }
  // Only the restartCount is recorded: the same incarnation, terminated, is dead.
  if (s.restartCount === c.restartCount) {
    if (s.state?.terminated) return { state: 'dead', reason: 'HolderContainerTerminated' };
    if (s.state?.running) return { state: 'alive' };
  }
  return { state: 'unknown', reason: `container ${c.name} is neither running nor terminated` };
}

/**
 * The holder's liveness, confirmed by a live read: a cache NotFound is never enough to declare a
 * holder dead (the cache may not have seen it yet); any other error is "unknown" and keeps the claim.
 */
export async function lookupHolder(
  deps: { client: Reader },
  namespace: string,
  name: string,
  cached: Pod[],
): Promise<HolderLookup> {
  // A cached pod that is deleting or replaced is already definite; otherwise read live.
  const fromCache = cached.find((p) => p.metadata.name === name);
  if (fromCache?.metadata.deletionTimestamp) return { found: true, pod: fromCache };
  try {
    const pod = await getOrUndefined(deps.client.get('Pod', { namespace, name }));
    return pod ? { found: true, pod } : { found: false };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}
