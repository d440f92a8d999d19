// Gathers a PodPool's snapshot: the pool, its pods and the namespace's claims from the cache (or
// live, when residue is about to be released), claims that pod labels name but the list lacks
// confirmed by live reads, the nodes its Idle pods run on, its PDB and its source Capture. The
// process's expectations are observed against the cache's view only; a live read keeps them.
import { LABEL_POOL } from '../../api/constants.ts';
import { getOrUndefined } from '../../api/errors.ts';
import type { ObjectKey } from '../../api/meta.ts';
import type { Client, Reader } from '../../api/ports.ts';
import type { Capture, Pod, PodClaim, PodPool } from '../../api/types.ts';
import { referencedPodNames } from '../../pool/demand.ts';
import { pdbNameFor } from '../../pool/disruption-budget.ts';
import { type PendingExpectations, PoolExpectations } from '../../pool/expectations.ts';
import { claimedBy } from '../../pool/pods.ts';
import type { PoolPodsSource } from '../../pool/pool-pod-index.ts';
import { nodeCanServe, readUnservableNodes } from '../../pool/serving.ts';
import type { PoolStatusPacer } from '../../pool/status-pacer.ts';
import { currentTemplateHash, poolTemplateHash } from '../../pool/template-hash.ts';
import type { EventRecorder } from '../apply.ts';
import { SAFETY_RULES, type SafetyRules } from '../safety-rules.ts';
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
  /**
   * The process's pool pod index, fed by the same pod informer as `cache` (pool-pod-index.ts): the
   * quiet Idle pods are counted, not listed, so a reconcile's cost follows what is not quiet in the
   * pool. Without one, each reconcile lists the pool's pods.
   */
  poolPods?: PoolPodsSource;
  /**
   * The process's pool status pacer (pool/status-pacer.ts): counts-only status changes are written
   * at most every few seconds per pool. Without one, every change is written at once.
   */
  statusPacer?: PoolStatusPacer;
}

export async function gatherPodPool(
  deps: PodPoolDeps,
  key: ObjectKey,
  { live, cached, full }: GatherOptions<PodPoolSnapshot>,
): Promise<PodPoolSnapshot | undefined> {
  const reader: Reader = live ? deps.client : deps.cache;
  const pool = await getOrUndefined(reader.get('PodPool', key));
  if (!pool) return undefined;
  const listPods = async () =>
    (
      await reader.list('Pod', {
        namespace: key.namespace,
        labelSelector: { matchLabels: { [LABEL_POOL]: key.name } },
      })
    ).items;
  // The process's pool pod index summarizes the quiet Idle pods (unless a full or live read is asked);
  // it needs the claims first (the quiet pods they reference are listed, not counted).
  const index = deps.poolPods && !live && !full ? deps.poolPods : undefined;
  let pods = index ? [] : await listPods();
  const listed = (await reader.list('PodClaim', { namespace: key.namespace })).items;
  let summary = index ? await summarizePoolPods(deps, index, key, pool, listed) : undefined;
  if (index) pods = summary?.pods ?? (await listPods());
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
  // A claim the cache lacks may reference a quiet pod the summary counted: list the pool instead.
  if (summary && claims !== listed) {
    summary = undefined;
    pods = await listPods();
    for (const p of pods) if (p.spec.nodeName && isIdlePod(p)) idleNodes.add(p.spec.nodeName);
  }
  const unservable = summary?.unservable ?? (await readUnservableNodes(deps.cache, idleNodes));
  const pdb = await getOrUndefined(
    deps.cache.get('PodDisruptionBudget', { namespace: key.namespace, name: pdbNameFor(key.name) }),
  );
  const source = pool.spec.source;
  const sourceCapture = summary
    ? summary.sourceCapture
    : source
      ? await getOrUndefined(reader.get('Capture', { namespace: key.namespace, name: source.captureName }))
      : undefined;
  const now = deps.now();
  const pacing = deps.statusPacer?.pacing(pool.metadata.uid ?? '');
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
    ...(summary ? { quietIdle: summary.quietIdle } : {}),
    ...(pacing ? { statusPacing: pacing } : {}),
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

interface PoolPodsSummary {
  /** The pool's pods that are not only counted: not quiet, or quiet but stranded or referenced. */
  pods: Pod[];
  quietIdle: { hash: string; count: number };
  /** Every node the cache knows that cannot serve. */
  unservable: Set<string>;
  /** The Capture spec.source names, read to judge the current hash (gather does not read it again). */
  sourceCapture?: Capture;
}

/**
 * The pool's pods from the process's index: every pod that is not quiet in full, and the quiet
 * ones counted, except those the decision must see (on a node that cannot serve, or referenced by a
 * claim: taken, pool/demand.ts). Undefined (list the pool) when quiet pods of another template than
 * the current one are there (a rollout chooses among them).
 */
async function summarizePoolPods(
  deps: PodPoolDeps,
  source: PoolPodsSource,
  key: ObjectKey,
  pool: PodPool,
  claims: readonly PodClaim[],
): Promise<PoolPodsSummary | undefined> {
  // The hash decide will judge by (decide.ts), from the Capture the snapshot carries.
  const rules = deps.rules ?? SAFETY_RULES;
  const capture = pool.spec.source
    ? await getOrUndefined(
        deps.cache.get('Capture', { namespace: key.namespace, name: pool.spec.source.captureName }),
      )
    : undefined;
  const hash =
    currentTemplateHash(pool, rules.judgePoolSource(pool, capture)) ??
    pool.status?.templateHash ??
    poolTemplateHash(pool);
  const unservable = new Set<string>();
  for (const n of (await deps.cache.list('Node')).items)
    if (!nodeCanServe(n)) unservable.add(n.metadata.name);
  // Nothing awaits from here on: the index is read at one instant.
  const view = source.view(key.namespace, key.name);
  if (!view) return undefined;
  if (view.quietWithHash(hash) !== view.quietCount) return undefined;
  const pods = view.others();
  const shown = new Set<string>();
  const show = (p: Pod) => {
    if (shown.has(p.metadata.name)) return;
    shown.add(p.metadata.name);
    pods.push(p);
  };
  for (const node of view.quietNodes())
    if (unservable.has(node)) for (const p of view.quietOnNode(node)) show(p);
  for (const name of referencedPodNames(claims, key.namespace)) {
    const p = view.quietNamed(name);
    if (p) show(p);
  }
  return {
    pods,
    quietIdle: { hash, count: view.quietCount - shown.size },
    unservable,
    ...(capture ? { sourceCapture: capture } : {}),
  };
}
