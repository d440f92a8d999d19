// Gathers a PodPool's snapshot: the pool, its pods and the namespace's claims from the cache (or
// live, when residue is about to be released), claims that pod labels name but the list lacks
// confirmed by live reads, the nodes its Idle pods run on, its PDB and its source Capture. The
// process's expectations are observed against the cache's view only; a live read keeps them.
import { LABEL_POOL } from '../../api/constants.ts';
import { getOrUndefined } from '../../api/errors.ts';
import type { ObjectKey } from '../../api/meta.ts';
import type { Client, Reader } from '../../api/ports.ts';
import type { Pod } from '../../api/types.ts';
import { pdbNameFor } from '../../pool/disruption-budget.ts';
import { type PendingExpectations, PoolExpectations } from '../../pool/expectations.ts';
import { claimedBy } from '../../pool/pods.ts';
import { readUnservableNodes } from '../../pool/serving.ts';
import type { EventRecorder } from '../apply.ts';
import type { SafetyRules } from '../safety-rules.ts';
import type { GatherOptions } from '../step.ts';
import { isIdlePod, type PodPoolSnapshot } from './decide.ts';

export interface PodPoolDeps {
  cache: Reader;
  client: Client;
  now: () => number;
  recorder?: EventRecorder;
  /** The rules decisions apply (default SAFETY_RULES; a test may break one on purpose). */
  rules?: SafetyRules;
  /**
   * The process's pool expectations (one per controller process, kept across reconciles). Without
   * one, each reconcile starts with none: fine for a cache that never lags (tests on the model).
   */
  expectations?: PoolExpectations;
}

export async function gatherPodPool(
  deps: PodPoolDeps,
  key: ObjectKey,
  { live, cached }: GatherOptions<PodPoolSnapshot>,
): Promise<PodPoolSnapshot | undefined> {
  const reader: Reader = live ? deps.client : deps.cache;
  const pool = await getOrUndefined(reader.get('PodPool', key));
  if (!pool) return undefined;
  const pods = (
    await reader.list('Pod', {
      namespace: key.namespace,
      labelSelector: { matchLabels: { [LABEL_POOL]: key.name } },
    })
  ).items;
  const listed = (await reader.list('PodClaim', { namespace: key.namespace })).items;
  // Copied only to add a claim a pod label names: a cache's list may be frozen and shared (ports.ts).
  let claims = listed;
  const missingClaims = new Set<string>();
  const known = new Set(claims.map((c) => c.metadata.name));
  // One pass over the pool: claim labels to confirm, and the Idle pods' nodes to judge.
  const idleNodes = new Set<string>();
  const unconfirmed: string[] = [];
  for (const p of pods) {
    const owner = claimedBy(p);
    if (owner === undefined) {
      if (p.spec.nodeName && isIdlePod(p)) idleNodes.add(p.spec.nodeName);
    } else if (!known.has(owner)) unconfirmed.push(owner);
  }
  for (const owner of unconfirmed) {
    if (known.has(owner) || missingClaims.has(owner)) continue;
    const c = await getOrUndefined(deps.client.get('PodClaim', { namespace: key.namespace, name: owner }));
    if (c) {
      if (claims === listed) claims = [...listed];
      claims.push(c);
      known.add(owner);
    } else missingClaims.add(owner);
  }
  const unservable = await readUnservableNodes(deps.cache, idleNodes);
  const pdb = await getOrUndefined(
    deps.cache.get('PodDisruptionBudget', { namespace: key.namespace, name: pdbNameFor(key.name) }),
  );
  const source = pool.spec.source;
  const sourceCapture = source
    ? await getOrUndefined(reader.get('Capture', { namespace: key.namespace, name: source.captureName }))
    : undefined;
  const now = deps.now();
  const expectations =
    cached?.expectations ?? (await observeExpectations(deps, key, pool.metadata.uid ?? '', now));
  return {
    pool,
    pods,
    claims,
    missingClaims,
    live,
    now,
    expectations,
    unservable,
    ...(pdb ? { pdb } : {}),
    ...(sourceCapture ? { sourceCapture } : {}),
  };
}

/** The process's expectations for the pool, observed by looking up only the pod names they wait on. */
async function observeExpectations(
  deps: PodPoolDeps,
  key: ObjectKey,
  poolUid: string,
  now: number,
): Promise<PendingExpectations> {
  const expectations = deps.expectations ?? new PoolExpectations();
  const shown = new Map<string, Pod>();
  for (const name of expectations.pendingNames(poolUid)) {
    const p = await getOrUndefined(deps.cache.get('Pod', { namespace: key.namespace, name }));
    if (p && p.metadata.labels?.[LABEL_POOL] === key.name) shown.set(name, p);
  }
  return expectations.observe(poolUid, shown, now);
}
