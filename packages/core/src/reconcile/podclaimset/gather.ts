// Gathers a PodClaimSet's snapshot: the set and the namespace's claims, from the cache, or live
// when a decision made from the cache is about to create or delete claims.
import { getOrUndefined } from '../../api/errors.ts';
import type { ObjectKey } from '../../api/meta.ts';
import type { Client, Reader } from '../../api/ports.ts';
import type { EventRecorder } from '../apply.ts';
import type { SafetyRules } from '../safety-rules.ts';
import type { GatherOptions } from '../step.ts';
import type { PodClaimSetSnapshot } from './decide.ts';

export interface PodClaimSetDeps {
  cache: Reader;
  client: Client;
  now: () => number;
  recorder?: EventRecorder;
  /** The rules decisions apply (default SAFETY_RULES; a test may break one on purpose). */
  rules?: SafetyRules;
}

export async function gatherPodClaimSet(
  deps: PodClaimSetDeps,
  key: ObjectKey,
  { live }: GatherOptions<PodClaimSetSnapshot>,
): Promise<PodClaimSetSnapshot | undefined> {
  const reader: Reader = live ? deps.client : deps.cache;
  const set = await getOrUndefined(reader.get('PodClaimSet', key));
  if (!set) return undefined;
  const claims = (await reader.list('PodClaim', { namespace: key.namespace })).items;
  return { set, claims, live, now: deps.now() };
}
