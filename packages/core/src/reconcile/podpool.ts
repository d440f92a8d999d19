// PodPool reconciler: keep minIdle Idle pods (plus one per Pending claim) within maxPods, delete
// only Idle pods with a resourceVersion precondition (a concurrent bind wins), release pods whose
// claim is gone (confirmed live), and report counts.
import { setCondition } from '../api/conditions.ts';
import { LABEL_POOL, LABEL_STATE } from '../api/constants.ts';
import { isApiError } from '../api/errors.ts';
import { deepEqual } from '../api/json.ts';
import { keyOf, type ObjectKey } from '../api/meta.ts';
import type { Client, Reader } from '../api/ports.ts';
import type { Pod, PodClaim, PodPool, PodPoolStatus } from '../api/types.ts';
import { isDeleting } from '../capture/liveness.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import { newIdlePodHints } from '../pool/disruption-hints.ts';
import { claimedBy, claimedByUid, stateOf } from '../pool/pods.ts';
import { outdatedIdleToDelete, scaleDownOrder } from '../pool/rollout.ts';
import { deleteIdlePodWrite, rolloutStatus, templateCondition } from '../pool/rollout-status.ts';
import { isUpdatedPod, LABEL_TEMPLATE_HASH, poolRelease, poolTemplateHash } from '../pool/template-hash.ts';
import { applyDecision, type EventRecorder } from './apply.ts';
import { type Decision, type EventSpec, event, type Write } from './decision.ts';
import { SAFETY_RULES, type SafetyRules } from './safety-rules.ts';
import { failedResult } from './step.ts';

export interface PodPoolSnapshot {
  pool: PodPool;
  pods: Pod[];
  claims: PodClaim[];
  /** Claims named by pod labels but missing from `claims`, confirmed by live reads. */
  missingClaims: Set<string>;
  live: boolean;
  now: number;
}

export interface PodPoolDecision extends Decision {
  needsLiveRead?: boolean;
}

export function isIdlePod(p: Pod): boolean {
  return stateOf(p) === 'Idle' && claimedBy(p) === undefined && !isDeleting(p);
}

/**
 * Pods of the pool that no claim holds: labelled for a claim that is gone (or a previous claim of
 * that name), or Bound/Draining with no label. A pod any non-deleting claim references is never
 * residue (that claim keeps it and fixes its label, P7); a pod labelled for an existing claim is
 * that claim's to adopt, release or finalize.
 */
function residuePods(s: PodPoolSnapshot, pods: Pod[]): { pod: Pod; why: string }[] {
  const references = new ClaimIndex(s.claims);
  const claimsByName = new Map(s.claims.map((c) => [c.metadata.name, c]));
  const out: { pod: Pod; why: string }[] = [];
  for (const p of pods) {
    const owner = claimedBy(p);
    const state = stateOf(p);
    if (owner === undefined && state !== 'Bound' && state !== 'Draining') continue;
    if (references.isReferenced(p.metadata.namespace ?? '', p.metadata.name)) continue;
    if (owner === undefined) {
      out.push({ pod: p, why: `is ${state} but no claim references or labels it` });
      continue;
    }
    const claim = claimsByName.get(owner);
    const uid = claimedByUid(p);
    if (s.missingClaims.has(owner) || !claim) out.push({ pod: p, why: `names missing claim ${owner}` });
    else if (uid && claim.metadata.uid !== uid)
      out.push({ pod: p, why: `names a previous claim ${owner} (uid ${uid})` });
  }
  return out;
}

/** Decides with core's rules unless a test hands in `rules` with one broken on purpose. */
export function decidePodPool(s: PodPoolSnapshot, rules: SafetyRules = SAFETY_RULES): PodPoolDecision {
  const pool = s.pool;
  if (pool.metadata.deletionTimestamp) return { writes: [], events: [] };
  const name = pool.metadata.name;
  const pods = s.pods.filter((p) => p.metadata.labels?.[LABEL_POOL] === name && !isDeleting(p));
  const idle = pods.filter(isIdlePod);
  const pendingClaims = s.claims.filter(
    (c) => c.spec.poolName === name && !c.spec.podName && !c.metadata.deletionTimestamp,
  ).length;
  const writes: Write[] = [];
  const events: EventSpec[] = [];

  // Residue (P5, P7): a claimed pod that no live claim holds goes back to the pool, after a live read.
  const residue = residuePods(s, pods);
  if (residue.length > 0 && !s.live) return { writes: [], events: [], needsLiveRead: true };
  for (const { pod: p, why } of residue) {
    writes.push(rules.releasePodWrite(p, poolRelease(pool), `pod ${p.metadata.name} ${why}`));
    events.push(event(pool, 'Warning', 'ResidueReleased', `pod ${p.metadata.name} ${why}`));
  }

  const desiredIdle = Math.min(
    pool.spec.minIdle + pendingClaims,
    Math.max(0, pool.spec.maxPods - (pods.length - idle.length)),
  );
  // Template rollout: only Idle pods of the current template count toward the target (rollout.ts).
  const hash = poolTemplateHash(pool);
  const currentIdle = idle.filter((p) => isUpdatedPod(p, hash));
  let created = 0;
  const scaledDown = new Set<string>();
  if (currentIdle.length < desiredIdle && pods.length < pool.spec.maxPods) {
    if (!s.live) return { writes: [], events: [], needsLiveRead: true };
    const n = Math.min(desiredIdle - currentIdle.length, pool.spec.maxPods - pods.length);
    created = n;
    for (let i = 0; i < n; i++)
      writes.push({ op: 'create', object: newPod(pool, s.now), why: `keep ${desiredIdle} Idle` });
    if (n > 0)
      events.push(event(pool, 'Normal', 'ScaledUp', `creating ${n} pod(s) to keep ${desiredIdle} Idle`));
  } else {
    const excess = Math.max(currentIdle.length - desiredIdle, pods.length - pool.spec.maxPods);
    if (excess > 0) {
      if (!s.live) return { writes: [], events: [], needsLiveRead: true };
      // Outdated, then not-yet-Ready, then the newest Idle pods go first; warm old pods stay.
      const victims = scaleDownOrder(idle, hash).slice(0, excess);
      for (const v of victims) {
        scaledDown.add(v.metadata.name);
        writes.push({
          op: 'delete',
          kind: 'Pod',
          key: keyOf(v),
          preconditions: { uid: v.metadata.uid!, resourceVersion: v.metadata.resourceVersion! },
          why: `scale down Idle pods to ${desiredIdle}`,
        });
      }
      if (victims.length > 0)
        events.push(event(pool, 'Normal', 'ScaledDown', `deleting ${victims.length} Idle pod(s)`));
    }
  }
  const outdated = outdatedIdleToDelete({
    idle,
    templateHash: hash,
    desiredIdle,
    roomToCreate: pods.length + created < pool.spec.maxPods,
    alreadyDeleting: scaledDown,
  });
  if (outdated.length > 0 && !s.live) return { writes: [], events: [], needsLiveRead: true };
  for (const v of outdated) writes.push(deleteIdlePodWrite(v, `replace Idle pod of an outdated template`));
  if (outdated.length > 0)
    events.push(
      event(
        pool,
        'Normal',
        'TemplateRollout',
        `replacing ${outdated.length} Idle pod(s) of an outdated template`,
      ),
    );

  const status: PodPoolStatus = {
    total: pods.length,
    idle: idle.length,
    bound: pods.filter((p) => stateOf(p) === 'Bound').length,
    draining: pods.filter((p) => stateOf(p) === 'Draining').length,
    observedGeneration: pool.metadata.generation ?? 0,
    ...rolloutStatus(pool, pods, hash),
  };
  const ok = idle.length >= Math.min(pool.spec.minIdle, pool.spec.maxPods - (pods.length - idle.length));
  // Other writers' conditions on the pool are kept; only Ready is ours.
  status.conditions = setCondition(
    pool.status?.conditions,
    {
      type: 'Ready',
      status: ok ? 'True' : 'False',
      reason: ok ? 'MinIdleKept' : 'ScalingUp',
      message: `${idle.length} Idle of ${pods.length} pods (minIdle ${pool.spec.minIdle}, maxPods ${pool.spec.maxPods})`,
      observedGeneration: pool.metadata.generation ?? 0,
    },
    s.now,
  );
  status.conditions = setCondition(status.conditions, templateCondition(pool, pods, hash), s.now);
  if (!deepEqual(status, pool.status ?? {})) {
    writes.push({
      op: 'patchStatus',
      kind: 'PodPool',
      key: keyOf(pool),
      patch: { status },
      precondition: { uid: pool.metadata.uid! },
      why: 'status',
    });
  }
  return { writes, events };
}

/** A new Idle pod of the pool; `now` gives its deletion cost (disruption-hints.ts). */
export function newPod(pool: PodPool, now: number): Pod {
  const t = pool.spec.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: '',
      generateName: `${pool.metadata.name}-`,
      namespace: pool.metadata.namespace ?? '',
      labels: {
        ...(t.metadata?.labels ?? {}),
        [LABEL_POOL]: pool.metadata.name,
        [LABEL_STATE]: 'Idle',
        [LABEL_TEMPLATE_HASH]: poolTemplateHash(pool),
      },
      annotations: { ...(t.metadata?.annotations ?? {}), ...newIdlePodHints(now) },
      ownerReferences: [
        {
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodPool',
          name: pool.metadata.name,
          uid: pool.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: JSON.parse(JSON.stringify(t.spec)),
  };
}

// ---------------- gather + act ----------------

export interface PodPoolDeps {
  cache: Reader;
  client: Client;
  now: () => number;
  recorder?: EventRecorder;
  /** The rules decisions apply (default SAFETY_RULES; a test may break one on purpose). */
  rules?: SafetyRules;
}

async function gather(
  deps: PodPoolDeps,
  reader: Reader,
  key: ObjectKey,
  live: boolean,
): Promise<PodPoolSnapshot | undefined> {
  let pool: PodPool;
  try {
    pool = await reader.get('PodPool', key);
  } catch (e) {
    if (isApiError(e, 'NotFound')) return undefined;
    throw e;
  }
  const pods = (
    await reader.list('Pod', {
      namespace: key.namespace,
      labelSelector: { matchLabels: { [LABEL_POOL]: key.name } },
    })
  ).items;
  const claims = (await reader.list('PodClaim', { namespace: key.namespace })).items;
  const missingClaims = new Set<string>();
  const known = new Set(claims.map((c) => c.metadata.name));
  for (const p of pods) {
    const owner = claimedBy(p);
    if (!owner || known.has(owner)) continue;
    try {
      const c = await deps.client.get('PodClaim', { namespace: key.namespace, name: owner });
      claims.push(c);
      known.add(owner);
    } catch (e) {
      if (!isApiError(e, 'NotFound')) throw e;
      missingClaims.add(owner);
    }
  }
  return { pool, pods, claims, missingClaims, live, now: deps.now() };
}

export async function reconcilePodPool(
  deps: PodPoolDeps,
  key: ObjectKey,
): Promise<{ requeueAfterMs?: number }> {
  let snap = await gather(deps, deps.cache, key, false);
  if (!snap) return {};
  let d = decidePodPool(snap, deps.rules);
  if (d.needsLiveRead) {
    snap = await gather(deps, deps.client, key, true);
    if (!snap) return {};
    d = decidePodPool(snap, deps.rules);
  }
  const res = await applyDecision(deps.client, d, deps.recorder);
  if (res.failed) return failedResult(res.failed.error);
  return d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs };
}
