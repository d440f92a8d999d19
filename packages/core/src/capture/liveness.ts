// Holder liveness, by pod name AND UID (seed: capture-claim-dead-owner). Only a definite answer
// makes a holder dead; anything we could not find out keeps the claim.
import type { Pod, PodRef } from '../api/types.ts';

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
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { state: 'dead', reason: 'HolderFinished' };
  return { state: 'alive' };
}

export function isPodReady(pod: Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

export function isDeleting(o: { metadata: { deletionTimestamp?: string } }): boolean {
  return Boolean(o.metadata.deletionTimestamp);
}
