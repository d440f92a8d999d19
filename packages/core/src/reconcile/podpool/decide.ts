// PodPool decisions (pure): keep minIdle Idle pods (plus one per waiting claim, pool/demand.ts)
// within maxPods, delete only Idle pods with a resourceVersion precondition (a concurrent bind wins),
// release pods whose claim is gone (confirmed live), keep the owned PDB, and report counts. Scaling
// decides from the cache, gated by expectations (pool/scaling.ts, pool/expectations.ts): no live
// list per reconcile.
// A pool with spec.source starts its pods from the named Capture's fenced result (pool/source.ts):
// until there is one it creates and replaces no pods (excess Idle pods still go) and says why
// (SourceReady). Whether its pods really resumed from an `image:` seed is pool/restore.ts'
// judgement (SourceRestored; onRestoreFailure Wait or Cold).
import { setCondition } from '../../api/conditions.ts';
import { LABEL_POOL, LABEL_STATE } from '../../api/constants.ts';
import { type Decision, type EventSpec, event, minRequeue, type Write } from '../../api/decision.ts';
import { deepEqual } from '../../api/json.ts';
import { keyOf } from '../../api/meta.ts';
import { isDeleting, isPodFinished } from '../../api/pod-predicates.ts';
import type { Capture, Pod, PodClaim, PodDisruptionBudget, PodPool, PodPoolStatus } from '../../api/types.ts';
import { ClaimIndex } from '../../pool/claim-index.ts';
import { referencedPodNames, waitingClaims } from '../../pool/demand.ts';
import { decideDisruptionBudget } from '../../pool/disruption-budget.ts';
import { newIdlePodHints } from '../../pool/disruption-hints.ts';
import { NO_PENDING, type PendingExpectations } from '../../pool/expectations.ts';
import { claimedBy, claimedByUid, poolOwnerReference, stateOf } from '../../pool/pods.ts';
import {
  CONDITION_SOURCE_RESTORED,
  judgeRestore,
  restoreCondition,
  restoreEvents,
} from '../../pool/restore.ts';
import { rolloutStatus, type TemplateCounts, templateCondition } from '../../pool/rollout-status.ts';
import { decideScaling, type ScalingDecision } from '../../pool/scaling.ts';
import { NO_UNSERVABLE_NODES, type UnservableNodes } from '../../pool/serving.ts';
import {
  CONDITION_SOURCE_READY,
  type PoolSeed,
  SOURCE_WAIT_MS,
  seedPod,
  sourceCondition,
  sourceEvent,
  withoutSourceAnnotations,
} from '../../pool/source.ts';
import type { StatusPacing } from '../../pool/status-pacer.ts';
import {
  currentTemplateHash,
  isUpdatedPod,
  LABEL_TEMPLATE_HASH,
  poolRelease,
  poolTemplateHash,
} from '../../pool/template-hash.ts';
import { SAFETY_RULES, type SafetyRules } from '../safety-rules.ts';

export interface PodPoolSnapshot {
  pool: PodPool;
  pods: Pod[];
  /** At least every claim on the pool and every claim referencing one of its pods (demand, residue). */
  claims: PodClaim[];
  /** Claims named by pod labels but missing from `claims`, confirmed by live reads. */
  missingClaims: Set<string>;
  live: boolean;
  now: number;
  /** Creates/deletes this controller issued that its cache does not show yet (expectations.ts). */
  expectations?: PendingExpectations;
  /** Nodes the pool's Idle pods run on that cannot serve (NotReady or cordoned). */
  unservable?: UnservableNodes;
  /** The PodDisruptionBudget named for the pool (`<pool>-bound`), as the cache shows it. */
  pdb?: PodDisruptionBudget;
  /** The Capture spec.source names, as the cache shows it (absent: not found, or no spec.source). */
  sourceCapture?: Capture;
  /**
   * Pods of the pool counted, not in `pods` (gather read the process's PoolPodIndex): quiet Idle
   * pods (pool-pod-index.ts) of template `hash`, on nodes that can serve, that no claim references.
   * A decision that must choose among them, or judges another template current, says `needsFullRead`.
   */
  quietIdle?: { hash: string; count: number };
  /** When this process last wrote the pool's status, and how often counts alone may be written. */
  statusPacing?: StatusPacing;
}

/** Residue decided from a cache says `needsLiveRead`: its claims are confirmed live first. */
export type PodPoolDecision = Decision;

export function isIdlePod(p: Pod): boolean {
  return stateOf(p) === 'Idle' && claimedBy(p) === undefined && !isDeleting(p);
}

/**
 * Pods of the pool that no claim holds: labelled for a claim that is gone (or a previous claim of
 * that name), or Bound/Draining with no label. A pod any non-deleting claim references is never
 * residue (that claim keeps it and fixes its label, P7); a pod labelled for an existing claim is
 * that claim's to adopt, release or finalize.
 */
function residuePods(s: PodPoolSnapshot, pods: Pod[], references: ClaimIndex): { pod: Pod; why: string }[] {
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

/** The pool's pods as its decision reads them, sorted and counted in one pass (see poolView). */
interface PoolView {
  /** The pool's pods (its label), terminating ones included: what scaling counts against maxPods. */
  all: Pod[];
  /** Non-deleting pods with a claimed-by label or labelled Bound/Draining: residue and demand read these. */
  claimed: Pod[];
  /** Non-deleting pods by template (rollout status). */
  template: TemplateCounts;
  /** Non-deleting pods Idle by label and unclaimed (isIdlePod), finished ones included. */
  idleByLabel: number;
  /** The same without finished ones: the status's Idle count (they are being replaced). */
  idle: number;
  bound: number;
  draining: number;
}

/** One pass over the snapshot's pods: a pool reconcile runs on every bind, over every pod of the pool. */
function poolView(pods: Pod[], pool: string, hash: string, quiet: number): PoolView {
  // Counted quiet pods are non-deleting, current, Idle and not finished (PodPoolSnapshot.quietIdle).
  const v: PoolView = {
    all: [],
    claimed: [],
    template: { total: quiet, outdated: 0, outdatedIdle: 0 },
    idleByLabel: quiet,
    idle: quiet,
    bound: 0,
    draining: 0,
  };
  let allOfPool = true;
  for (const p of pods) {
    if (p.metadata.labels?.[LABEL_POOL] !== pool) {
      allOfPool = false;
      continue;
    }
    if (isDeleting(p)) continue;
    const state = stateOf(p);
    v.template.total++;
    if (!isUpdatedPod(p, hash)) {
      v.template.outdated++;
      if (state === 'Idle') v.template.outdatedIdle++;
    }
    if (state === 'Bound') v.bound++;
    else if (state === 'Draining') v.draining++;
    const owner = claimedBy(p);
    if (owner !== undefined || state === 'Bound' || state === 'Draining') v.claimed.push(p);
    else if (state === 'Idle') {
      v.idleByLabel++;
      if (!isPodFinished(p)) v.idle++;
    }
  }
  v.all = allOfPool ? pods : pods.filter((p) => p.metadata.labels?.[LABEL_POOL] === pool);
  return v;
}

/** Decides with core's rules unless a test hands in `rules` with one broken on purpose. */
export function decidePodPool(s: PodPoolSnapshot, rules: SafetyRules = SAFETY_RULES): PodPoolDecision {
  const pool = s.pool;
  if (pool.metadata.deletionTimestamp) return { writes: [], events: [] };
  const name = pool.metadata.name;
  const writes: Write[] = [];
  const events: EventSpec[] = [];

  // spec.source: pods start only from the Capture's fenced result; without one, none are created.
  const source = rules.judgePoolSource(pool, s.sourceCapture);
  const seed = source.kind === 'fenced' ? source.seed : undefined;
  const current = currentTemplateHash(pool, source);
  // While the source is not ready no pod is new: the pods are judged against the hash last reported.
  const hash = current ?? pool.status?.templateHash ?? poolTemplateHash(pool);
  // Counted pods are of the template the gather judged current; another one needs them listed.
  const quiet = s.quietIdle?.count ?? 0;
  if (quiet > 0 && s.quietIdle?.hash !== hash) return { writes: [], events: [], needsFullRead: true };
  // Terminating pods count against maxPods (scaling.ts); the rest of the pool's view ignores them.
  const view = poolView(s.pods, name, hash, quiet);
  // Demand (pool/demand.ts): claims waiting, and pods a claim references whatever their labels say.
  // Only claimed pods can be residue or a bind in flight, so both read view.claimed.
  const references = new ClaimIndex(s.claims);
  const pendingClaims = waitingClaims(name, view.claimed, s.claims, references, rules.isLostForGood).length;

  // Residue (P5, P7): a claimed pod that no live claim holds goes back to the pool, after a live read.
  const residue = residuePods(s, view.claimed, references);
  if (residue.length > 0 && !s.live) return { writes: [], events: [], needsLiveRead: true };
  for (const { pod: p, why } of residue) {
    writes.push(rules.releasePodWrite(p, poolRelease(pool, source), `pod ${p.metadata.name} ${why}`));
    events.push(event(pool, 'Warning', 'ResidueReleased', `pod ${p.metadata.name} ${why}`));
  }

  // An `image:` seed: which pods could not be restored, and whether new pods start cold.
  const restore = judgeRestore(pool, view.all, seed);
  const failedRestore =
    restore.startCold && restore.failures.length > 0
      ? new Map(restore.failures.map((f) => [f.pod, `could not be restored (${f.reason}): starting cold`]))
      : undefined;

  const namespace = pool.metadata.namespace ?? '';
  const referenced = referencedPodNames(s.claims, namespace);
  const scaling = decideScaling({
    pool,
    pods: view.all,
    pendingClaims,
    ...(referenced.size > 0
      ? {
          taken: (p: Pod) => (p.metadata.namespace ?? '') === namespace && referenced.has(p.metadata.name),
        }
      : {}),
    expectations: s.expectations ?? NO_PENDING,
    unservable: s.unservable ?? NO_UNSERVABLE_NODES,
    now: s.now,
    templateHash: hash,
    newPod: (p) => newPod(p, s.now, seed, { cold: restore.startCold }),
    ...(failedRestore ? { cannotServe: (p: Pod) => failedRestore.get(p.metadata.name) } : {}),
    ...(current === undefined ? { holdCreates: true } : {}),
    ...(quiet > 0 ? { quietIdle: quiet } : {}),
  });
  // Nothing is applied from a summary that cannot choose: residue (if any) was decided live.
  if (scaling.needsFullRead) return { writes: [], events: [], needsFullRead: true };
  writes.push(...scaling.writes);
  events.push(...scaling.events);
  const budget = decideDisruptionBudget(pool, s.pdb);
  if (budget.write) writes.push(budget.write);
  if (budget.conflict) events.push(event(pool, 'Warning', 'DisruptionBudgetConflict', budget.conflict));

  const total = view.template.total;
  const status: PodPoolStatus = {
    total,
    idle: view.idle,
    bound: view.bound,
    draining: view.draining,
    observedGeneration: pool.metadata.generation ?? 0,
    ...rolloutStatus(pool, view.template, hash),
    ...(restore.startCold && seed ? { coldStartRef: seed.ref } : {}),
  };
  // Unschedulable pods are Idle by label but will not serve until a node is found.
  const ok =
    view.idle - scaling.unschedulable >=
    Math.min(pool.spec.minIdle, pool.spec.maxPods - (total - view.idleByLabel));
  // Other writers' conditions on the pool are kept; only Ready is ours.
  status.conditions = setCondition(
    pool.status?.conditions,
    {
      type: 'Ready',
      status: ok ? 'True' : 'False',
      reason: ok
        ? 'MinIdleKept'
        : current === undefined
          ? 'SourceNotReady'
          : scaling.unschedulable > 0
            ? 'PodsUnschedulable'
            : 'ScalingUp',
      message: `${view.idle} Idle of ${total} pods (minIdle ${pool.spec.minIdle}, maxPods ${pool.spec.maxPods})${scalingNote(scaling)}`,
      observedGeneration: pool.metadata.generation ?? 0,
    },
    s.now,
  );
  status.conditions = setCondition(status.conditions, templateCondition(pool, view.template, hash), s.now);
  const sourceReady = sourceCondition(pool, source);
  if (sourceReady) {
    const ev = sourceEvent(pool, source, sourceReady);
    if (ev) events.push(ev);
    status.conditions = setCondition(status.conditions, sourceReady, s.now);
  } else {
    // spec.source removed: its condition goes with it.
    status.conditions = status.conditions.filter((c) => c.type !== CONDITION_SOURCE_READY);
  }
  const restored = restoreCondition(pool, seed, restore);
  if (restored) {
    events.push(...restoreEvents(pool, seed, restore));
    status.conditions = setCondition(status.conditions, restored, s.now);
  } else if (current !== undefined) {
    // No `image:` seed (any more): nothing is restored, so nothing to report. While the source is
    // not ready the last word stays.
    status.conditions = status.conditions.filter((c) => c.type !== CONDITION_SOURCE_RESTORED);
  }
  // Counts alone are written at most every statusPacing.minIntervalMs (pool/status-pacer.ts); the
  // pool comes back for them.
  let statusWait: number | undefined;
  if (!deepEqual(status, pool.status ?? {})) {
    const wait = countsOnly(status, pool.status) ? paceWait(s) : 0;
    if (wait > 0) statusWait = wait;
    else
      writes.push({
        op: 'patchStatus',
        kind: 'PodPool',
        key: keyOf(pool),
        // A merge patch: a field that goes must be written as null.
        patch: {
          status:
            pool.status?.coldStartRef !== undefined && status.coldStartRef === undefined
              ? { ...status, coldStartRef: null }
              : status,
        },
        precondition: { uid: pool.metadata.uid! },
        why: 'status',
      });
  }
  const requeueAfterMs = minRequeue(
    scaling.requeueAfterMs,
    current === undefined ? SOURCE_WAIT_MS : undefined,
    statusWait,
  );
  return requeueAfterMs === undefined ? { writes, events } : { writes, events, requeueAfterMs };
}

/** The counts of a pool's status, and the condition messages that repeat them. */
const COUNT_FIELDS = ['total', 'idle', 'bound', 'draining', 'updated', 'outdated'] as const;

/** The status with its counts (and the condition messages that carry them) left out. */
function withoutCounts(s: PodPoolStatus): unknown {
  const rest: Record<string, unknown> = { ...s };
  for (const f of COUNT_FIELDS) delete rest[f];
  rest.conditions = (s.conditions ?? []).map(({ message: _m, ...c }) => c);
  return rest;
}

/** `next` differs from `prev` in counts only (and the messages that say them). */
function countsOnly(next: PodPoolStatus, prev: PodPoolStatus | undefined): boolean {
  return prev !== undefined && deepEqual(withoutCounts(next), withoutCounts(prev));
}

/** How long a counts-only status write waits (0: write now). */
function paceWait(s: PodPoolSnapshot): number {
  const p = s.statusPacing;
  return p ? Math.max(0, p.lastWriteAt + p.minIntervalMs - s.now) : 0;
}

/**
 * Only what every replica sees alike goes into the status: a replica's own expectations (x.held)
 * would make replicas overwrite each other's message, each write waking the others, forever.
 */
function scalingNote(x: ScalingDecision): string {
  const notes = [
    ...(x.unschedulable > 0 ? [`${x.unschedulable} unschedulable (held, not multiplied)`] : []),
    ...(x.stranded > 0 ? [`${x.stranded} on unservable nodes (being replaced)`] : []),
    ...(x.finished > 0 ? [`${x.finished} finished (being replaced)`] : []),
  ];
  return notes.length > 0 ? `; ${notes.join('; ')}` : '';
}

/**
 * A new Idle pod of the pool; `now` gives its deletion cost (disruption-hints.ts). A pool with
 * spec.source passes the fenced `seed` its pods start from (pool/source.ts); the template's own
 * `claimkit.dev/source-*` annotations are never copied. `cold`: the template's own image, not the
 * seed's checkpoint image (pool/restore.ts).
 */
export function newPod(pool: PodPool, now: number, seed?: PoolSeed, o: { cold?: boolean } = {}): Pod {
  const t = pool.spec.template;
  const pod: Pod = {
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
        [LABEL_TEMPLATE_HASH]: poolTemplateHash(pool, seed),
      },
      annotations: { ...withoutSourceAnnotations(t.metadata?.annotations ?? {}), ...newIdlePodHints(now) },
      ownerReferences: [poolOwnerReference(pool)],
    },
    spec: JSON.parse(JSON.stringify(t.spec)),
  };
  return seed && pool.spec.source ? seedPod(pod, pool.spec.source, seed, o) : pod;
}
