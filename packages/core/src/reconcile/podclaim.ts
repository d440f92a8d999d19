// PodClaim reconciler: bind, migrate, release, Lost, finalize. Each decision is one resumable step:
// whatever prefix of its writes landed, the next decision (from a fresh read) continues from there.
import {
  ANNOTATION_MIGRATE,
  ANNOTATION_MIGRATE_TO,
  FINALIZER_RELEASE,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
} from '../api/constants.ts';
import { getOrUndefined, isApiError } from '../api/errors.ts';
import { deepEqual } from '../api/json.ts';
import { keyOf, type ObjectKey, parseTimestamp, toTimestamp } from '../api/meta.ts';
import type { Client, Reader } from '../api/ports.ts';
import type { Pod, PodClaim, PodClaimPhase, PodClaimStatus, PodPool } from '../api/types.ts';
import { isDeleting } from '../capture/liveness.ts';
import { bindCandidates, CANDIDATE_WINDOW, pickCandidate } from '../pool/candidates.ts';
import { ClaimIndex } from '../pool/claim-index.ts';
import {
  ANNOTATION_DRAINING_SINCE,
  bindPodWrite,
  claimedBy,
  claimedByUid,
  drainPodWrite,
  isClaimedBy,
  isIdleAndReady,
  labelOwnedPodWrite,
  poolOf,
  releasePodWrite,
  stateOf,
  unlabelPodWrite,
} from '../pool/pods.ts';
import { isBroken } from '../sim/broken-rules.ts';
import { applyDecision, type EventRecorder } from './apply.ts';
import { failedResult } from './capture.ts';
import { type Decision, type EventSpec, event, type Write } from './decision.ts';

/** What a live read of the claim's pod found (P2: Lost only on a live answer). */
export type PodLookup = { found: true; pod: Pod } | { found: false };
/** What a live read of a claim found. */
export type ClaimLookup = { found: true; claim: PodClaim } | { found: false };

export interface PodClaimSnapshot {
  claim: PodClaim;
  pool: PodPool | undefined;
  /** Pods of the claim's pool in its namespace, plus any pod the claim references. */
  pods: Pod[];
  /** Claims in the namespace (for the reference index); a live list when the claim is deleting. */
  claims: PodClaim[];
  /** Live read of spec.podName, present whenever the cache did not show it healthy and ours. */
  liveCurrent?: PodLookup;
  /** Live read of the claim that spec.podName's claimed-by label names, when it is not this claim. */
  labelHolder?: ClaimLookup;
  now: number;
}

/** Retry interval when waiting for something outside our control (an Idle pod, a pool). */
export const WAIT_MS = 5000;

export function decidePodClaim(s: PodClaimSnapshot): Decision {
  const c = s.claim;
  const ns = c.metadata.namespace ?? '';
  const index = new ClaimIndex(s.claims);
  const byName = new Map(s.pods.map((p) => [p.metadata.name, p]));
  const policy = s.pool?.spec.releasePolicy ?? 'Recycle';
  const labelledOurs = s.pods.filter((p) => isClaimedBy(p, c));

  if (c.metadata.deletionTimestamp) return finalize(s, index, byName, labelledOurs, policy);

  const holdsSomething = Boolean(c.spec.podName || c.spec.sourcePod) || labelledOurs.length > 0;
  if (!hasReleaseFinalizer(c) && holdsSomething) {
    const next = {
      ...c,
      metadata: { ...c.metadata, finalizers: [...(c.metadata.finalizers ?? []), FINALIZER_RELEASE] },
    };
    return {
      writes: [{ op: 'update', object: next, why: 'add release finalizer' }],
      events: [],
      requeueAfterMs: 0,
    };
  }

  const events: EventSpec[] = [];
  // ---- the pod we reference: still there and ours? (P2, P7) ----
  if (c.spec.podName) {
    const cached = byName.get(c.spec.podName);
    const cur = s.liveCurrent ? (s.liveCurrent.found ? s.liveCurrent.pod : undefined) : cached;
    const hold = judgeReferencedPod(c, cur, index, s.labelHolder);
    if (hold.kind !== 'ours') {
      // Only a live read may decide; the cache may simply not have seen the pod or its label yet.
      if (!s.liveCurrent || hold.kind === 'unknown') return { writes: [], events: [], requeueAfterMs: 0 };
    }
    if (hold.kind === 'lost') {
      const why = hold.why;
      const spec = isBroken('P2-lost-keeps-pod') ? c.spec : { ...c.spec, podName: '', nodeName: '' };
      events.push(
        event(c, 'Warning', 'Lost', `pod ${c.spec.podName} ${why}; claim is Lost and will bind again`),
      );
      const status: PodClaimStatus = { ...c.status, phase: 'Lost', lostTime: toTimestamp(s.now) };
      return {
        writes: [
          { op: 'update', object: { ...c, spec }, why: `clear podName: pod ${why}` },
          statusPatch(c, status, s.now, undefined, generationAfter(c, spec)),
        ],
        events,
        requeueAfterMs: 0,
      };
    }
    if (hold.kind === 'unlabelled') {
      // Our pod lost its label (another claim's finalizer removes only its own): label it again.
      return { writes: [labelOwnedPodWrite(hold.pod, c)], events, requeueAfterMs: 0 };
    }
    if (hold.kind === 'foreignLabel') {
      // P7: a label naming a claim that does not hold the pod never takes it from us. Remove it
      // (never relabel A->B in one write, P1); the next pass labels the pod ours.
      const msg = `pod ${c.spec.podName} was labelled for ${hold.labelled}, which ${hold.why}; the claim keeps its pod`;
      return {
        writes: [unlabelPodWrite(hold.pod, `drop label: ${hold.labelled} ${hold.why}`)],
        events: [event(c, 'Warning', 'ForeignLabelRemoved', msg)],
        requeueAfterMs: 0,
      };
    }
  }

  // ---- a migration in progress: drain and release the source ----
  if (c.spec.sourcePod && c.spec.sourcePod === c.spec.podName) return repairSelfMigration(c);
  if (c.spec.sourcePod) return continueMigration(s, index, byName, policy);

  // ---- pods labelled ours that we do not reference: adopt one (resume) or release ----
  const strays = labelledOurs.filter((p) => p.metadata.name !== c.spec.podName && !isDeleting(p));
  const migrationRequested = c.metadata.annotations?.[ANNOTATION_MIGRATE] !== undefined;

  if (!c.spec.podName) {
    const adopt = strays.find((p) => !index.otherReference(ns, p.metadata.name, c) && stateOf(p) === 'Bound');
    if (adopt) return bindClaim(c, adopt, [], s.now, 'resume bind');
    if (strays.length > 0) return releaseStrays(strays, policy, index, c);
    const pod = pickCandidate(bindCandidates(c.spec.poolName, s.pods, index), c);
    if (!pod) {
      const phase: PodClaimPhase = c.status?.phase === 'Lost' ? 'Lost' : 'Pending';
      return ensurePhase(c, phase, s.now, WAIT_MS, 'no Idle pod in pool');
    }
    return bindClaim(c, pod, [bindPodWrite(pod, c)], s.now, 'bind');
  }

  // A migration target we CAS'd but did not record yet is adopted; any other stray is released.
  const adopted = migrationRequested
    ? strays.find((p) => !index.otherReference(ns, p.metadata.name, c) && stateOf(p) === 'Bound')
    : undefined;
  const toRelease = strays.filter((p) => p !== adopted);
  if (toRelease.length > 0) return releaseStrays(toRelease, policy, index, c);

  if (migrationRequested) {
    if (adopted) return startMigration(c, byName.get(c.spec.podName)!, adopted, [], s.now);
    const wanted = c.metadata.annotations?.[ANNOTATION_MIGRATE_TO];
    let target: Pod | undefined;
    if (wanted) {
      const p = byName.get(wanted);
      if (p && isIdleAndReady(p) && poolOf(p) === c.spec.poolName && !index.isReferenced(ns, wanted))
        target = p;
    } else {
      target = pickCandidate(
        bindCandidates(c.spec.poolName, s.pods, index).filter((p) => p.metadata.name !== c.spec.podName),
        c,
      );
    }
    if (!target) {
      if (c.status?.phase !== 'Bound') return ensurePhase(c, 'Bound', s.now, 0, `bound to ${c.spec.podName}`);
      const msg = wanted
        ? `migration target ${wanted} is not an Idle pod of pool ${c.spec.poolName}`
        : 'no Idle pod to migrate to';
      return {
        writes: conditionWrites(c, 'Migrating', 'False', 'MigrationPending', msg, s.now),
        events: [event(c, 'Warning', 'MigrationPending', msg)],
        requeueAfterMs: WAIT_MS,
      };
    }
    return startMigration(c, byName.get(c.spec.podName)!, target, [bindPodWrite(target, c)], s.now);
  }

  const pod = byName.get(c.spec.podName);
  if (pod?.spec.nodeName && pod.spec.nodeName !== c.spec.nodeName) {
    return {
      writes: [
        {
          op: 'update',
          object: { ...c, spec: { ...c.spec, nodeName: pod.spec.nodeName } },
          why: 'sync nodeName',
        },
      ],
      events: [],
    };
  }
  return ensurePhase(c, 'Bound', s.now, undefined, `bound to ${c.spec.podName}`);
}

function isOlder(a: PodClaim, b: PodClaim): boolean {
  const ta = parseTimestamp(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTimestamp(b.metadata.creationTimestamp) ?? 0;
  return ta !== tb ? ta < tb : a.metadata.name < b.metadata.name;
}

/** How a claim stands with the pod its spec.podName references. */
type PodHold =
  | { kind: 'ours' }
  | { kind: 'unlabelled'; pod: Pod }
  | { kind: 'foreignLabel'; pod: Pod; labelled: string; why: string }
  | { kind: 'lost'; why: string }
  /** The pod is labelled for another claim we have not read yet. */
  | { kind: 'unknown' };

/**
 * P2 and P7: a claim keeps the pod its spec references unless the pod is gone or being deleted, or
 * another claim that references the pod holds it (its label, or the oldest reference when the pod
 * is unlabelled). A label naming a deleting, missing or non-referencing claim takes nothing away.
 */
export function judgeReferencedPod(
  c: PodClaim,
  cur: Pod | undefined,
  index: ClaimIndex,
  labelHolder: ClaimLookup | undefined,
): PodHold {
  if (!cur) return { kind: 'lost', why: 'is gone' };
  if (isDeleting(cur)) return { kind: 'lost', why: 'is being deleted' };
  if (isClaimedBy(cur, c)) return { kind: 'ours' };
  const ns = c.metadata.namespace ?? '';
  const labelled = claimedBy(cur);
  if (labelled === undefined) {
    // An unlabelled pod referenced by several claims (a legacy writer's doing) stays with the oldest.
    const olderRival = index
      .referencing(ns, cur.metadata.name)
      .find((r) => r.claim.metadata.uid !== c.metadata.uid && isOlder(r.claim, c));
    if (olderRival)
      return { kind: 'lost', why: `is also referenced by older claim ${olderRival.claim.metadata.name}` };
    return { kind: 'unlabelled', pod: cur };
  }
  if (isBroken('P7-foreign-label-takes-pod')) return { kind: 'lost', why: `is claimed by ${labelled}` };
  if (!labelHolder) return { kind: 'unknown' };
  if (!labelHolder.found) return { kind: 'foreignLabel', pod: cur, labelled, why: 'does not exist' };
  const holder = labelHolder.claim;
  if (holder.metadata.name !== labelled) return { kind: 'unknown' };
  if (holder.metadata.uid === c.metadata.uid)
    return { kind: 'foreignLabel', pod: cur, labelled, why: 'is a previous claim of this name' };
  if (holder.metadata.deletionTimestamp)
    return { kind: 'foreignLabel', pod: cur, labelled, why: 'is being deleted' };
  const uid = claimedByUid(cur);
  if (uid !== undefined && uid !== holder.metadata.uid)
    return { kind: 'foreignLabel', pod: cur, labelled, why: 'is a previous claim of that name' };
  if (holder.spec.podName !== cur.metadata.name && holder.spec.sourcePod !== cur.metadata.name)
    return { kind: 'foreignLabel', pod: cur, labelled, why: 'does not reference it' };
  return { kind: 'lost', why: `is claimed by ${labelled}` };
}

function hasReleaseFinalizer(c: PodClaim): boolean {
  return (c.metadata.finalizers ?? []).includes(FINALIZER_RELEASE);
}

/** The claim with `spec`, and with the release finalizer (a bind adds it in the same write). */
function withSpec(c: PodClaim, spec: PodClaim['spec']): PodClaim {
  if (hasReleaseFinalizer(c)) return { ...c, spec };
  return {
    ...c,
    metadata: { ...c.metadata, finalizers: [...(c.metadata.finalizers ?? []), FINALIZER_RELEASE] },
    spec,
  };
}

/** The generation the server will have after writing `spec` (it bumps only on a spec change). */
function generationAfter(c: PodClaim, spec: PodClaim['spec']): number {
  const g = c.metadata.generation ?? 0;
  return deepEqual(c.spec, spec) ? g : g + 1;
}

function bindClaim(c: PodClaim, pod: Pod, podWrites: Write[], now: number, why: string): Decision {
  const spec = { ...c.spec, podName: pod.metadata.name, nodeName: pod.spec.nodeName ?? '' };
  const status: PodClaimStatus = { ...c.status, phase: 'Bound', boundTime: toTimestamp(now) };
  return {
    writes: [
      ...podWrites,
      { op: 'update', object: withSpec(c, spec), why: `${why}: podName=${pod.metadata.name}` },
      statusPatch(c, status, now, undefined, generationAfter(c, spec)),
    ],
    events: [
      event(c, 'Normal', 'Bound', `bound to pod ${pod.metadata.name} on node ${pod.spec.nodeName ?? ''}`),
    ],
  };
}

function startMigration(
  c: PodClaim,
  source: Pod | undefined,
  target: Pod,
  podWrites: Write[],
  now: number,
): Decision {
  const spec = {
    ...c.spec,
    sourcePod: c.spec.podName ?? '',
    podName: target.metadata.name,
    nodeName: target.spec.nodeName ?? '',
  };
  const status: PodClaimStatus = {
    ...c.status,
    phase: 'Migrating',
    migrations: (c.status?.migrations ?? 0) + 1,
  };
  return {
    writes: [
      ...podWrites,
      {
        op: 'update',
        object: withSpec(c, spec),
        why: `migrate ${spec.sourcePod} -> ${target.metadata.name}`,
      },
      statusPatch(c, status, now, undefined, generationAfter(c, spec)),
    ],
    events: [
      event(
        c,
        'Normal',
        'MigrationStarted',
        `migrating from ${source?.metadata.name ?? spec.sourcePod} to ${target.metadata.name} (${c.metadata.annotations?.[ANNOTATION_MIGRATE] ?? ''})`,
      ),
    ],
    requeueAfterMs: 0,
  };
}

/**
 * P7: sourcePod == podName (a legacy writer, or CEL off) is no migration at all. Clearing sourcePod
 * is the whole repair: "finishing" it would release the claim's own pod.
 */
function repairSelfMigration(c: PodClaim): Decision {
  const msg = `sourcePod and podName both name ${c.spec.podName}: cleared sourcePod; the claim keeps its pod`;
  return {
    writes: [
      {
        op: 'update',
        object: { ...c, spec: { ...c.spec, sourcePod: '' } },
        why: `clear self-referencing sourcePod ${c.spec.sourcePod}`,
      },
    ],
    events: [event(c, 'Warning', 'SelfMigrationRepaired', msg)],
    requeueAfterMs: 0,
  };
}

function continueMigration(
  s: PodClaimSnapshot,
  index: ClaimIndex,
  byName: Map<string, Pod>,
  policy: 'Recycle' | 'Delete',
): Decision {
  const c = s.claim;
  const ns = c.metadata.namespace ?? '';
  const src = byName.get(c.spec.sourcePod!);
  const drainMs = (s.pool?.spec.drainSeconds ?? 0) * 1000;
  if (src && isClaimedBy(src, c) && !isDeleting(src)) {
    if (stateOf(src) !== 'Draining' && drainMs > 0) {
      return { writes: [drainPodWrite(src, s.now)], events: [], requeueAfterMs: drainMs };
    }
    const since = parseTimestamp(src.metadata.annotations?.[ANNOTATION_DRAINING_SINCE]) ?? s.now - drainMs;
    if (s.now < since + drainMs) return { writes: [], events: [], requeueAfterMs: since + drainMs - s.now };
  }
  // Stop referencing the source first, then release it: a released pod is never still referenced.
  const annotations = { ...(c.metadata.annotations ?? {}) };
  delete annotations[ANNOTATION_MIGRATE];
  delete annotations[ANNOTATION_MIGRATE_TO];
  const next: PodClaim = {
    ...c,
    metadata: { ...c.metadata, annotations },
    spec: { ...c.spec, sourcePod: '' },
  };
  const writes: Write[] = [{ op: 'update', object: next, why: `finish migration from ${c.spec.sourcePod}` }];
  // The source is ours to release when labelled ours, or unlabelled and still Bound/Draining (a
  // deleting claim's finalizer dropped only its own label): otherwise it would leak (P7).
  const srcOurs =
    src &&
    (isClaimedBy(src, c) || (claimedBy(src) === undefined && stateOf(src) !== 'Idle')) &&
    !index.otherReference(ns, src.metadata.name, c);
  if (src && srcOurs)
    writes.push(releasePodWrite(src, policy, `release migration source ${src.metadata.name}`));
  const phase: PodClaimPhase = c.spec.podName ? 'Bound' : 'Lost';
  writes.push(statusPatch(c, { ...c.status, phase }, s.now, undefined, generationAfter(c, next.spec)));
  return {
    writes,
    events: [
      event(
        c,
        'Normal',
        'Migrated',
        `migration from ${c.spec.sourcePod} to ${c.spec.podName || '(lost)'} finished`,
      ),
    ],
    requeueAfterMs: 0,
  };
}

function releaseStrays(
  strays: Pod[],
  policy: 'Recycle' | 'Delete',
  index: ClaimIndex,
  c: PodClaim,
): Decision {
  const ns = c.metadata.namespace ?? '';
  const writes = strays.map((p) =>
    index.otherReference(ns, p.metadata.name, c)
      ? unlabelPodWrite(p, `pod ${p.metadata.name} is referenced by another claim: drop our label`)
      : releasePodWrite(p, policy, `release stray pod ${p.metadata.name} labelled for ${c.metadata.name}`),
  );
  return { writes, events: [], requeueAfterMs: 0 };
}

/** P3: always completes. Pods we own are released; a pod another claim references keeps that claim. */
function finalize(
  s: PodClaimSnapshot,
  index: ClaimIndex,
  byName: Map<string, Pod>,
  labelledOurs: Pod[],
  policy: 'Recycle' | 'Delete',
): Decision {
  const c = s.claim;
  const ns = c.metadata.namespace ?? '';
  const writes: Write[] = [];
  const seen = new Set<string>();
  const involved = [c.spec.podName, c.spec.sourcePod, ...labelledOurs.map((p) => p.metadata.name)];
  for (const name of involved) {
    if (!name || seen.has(name)) continue;
    seen.add(name);
    const pod = byName.get(name);
    if (!pod) continue;
    const ours = isClaimedBy(pod, c);
    const other = index.otherReference(ns, name, c);
    if (other) {
      if (isBroken('P3-finalize-skips-shared-pod')) return { writes, events: [], requeueAfterMs: 1000 };
      if (ours)
        writes.push(
          unlabelPodWrite(pod, `finalize: ${name} belongs to ${other.claim.metadata.name}; drop our label`),
        );
      continue;
    }
    if (ours || claimedBy(pod) === undefined) {
      if (claimedBy(pod) === undefined && stateOf(pod) === 'Idle') continue;
      writes.push(releasePodWrite(pod, policy, `finalize: release ${name}`));
    }
  }
  const finalizers = (c.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_RELEASE);
  if (finalizers.length !== (c.metadata.finalizers ?? []).length) {
    writes.push({
      op: 'update',
      object: { ...c, metadata: { ...c.metadata, finalizers } },
      why: 'remove release finalizer',
    });
  }
  return {
    writes,
    events:
      writes.length > 0
        ? [event(c, 'Normal', 'Finalized', `released ${writes.length - 1} pod(s); finalizer removed`)]
        : [],
  };
}

function ensurePhase(
  c: PodClaim,
  phase: PodClaimPhase,
  now: number,
  requeueAfterMs: number | undefined,
  msg: string,
): Decision {
  const want = phase === 'Bound' ? 'True' : 'False';
  const cond = (c.status?.conditions ?? []).find((x) => x.type === 'Ready');
  const upToDate =
    c.status?.phase === phase &&
    c.status.observedGeneration === (c.metadata.generation ?? 0) &&
    cond?.status === want &&
    cond.reason === phase;
  const d: Decision = {
    writes: upToDate ? [] : [statusPatch(c, { ...c.status, phase }, now, msg)],
    events: [],
  };
  if (!upToDate && phase === 'Pending' && c.status?.phase !== 'Pending') {
    d.events.push(event(c, 'Normal', 'Pending', msg));
  }
  if (requeueAfterMs !== undefined) d.requeueAfterMs = requeueAfterMs;
  return d;
}

function conditionWrites(
  c: PodClaim,
  type: string,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: number,
): Write[] {
  const prev = (c.status?.conditions ?? []).find((x) => x.type === type);
  if (prev && prev.status === status && prev.reason === reason && prev.message === message) return [];
  const conditions = [
    ...(c.status?.conditions ?? []).filter((x) => x.type !== type),
    {
      type,
      status,
      reason,
      message,
      lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : toTimestamp(now),
      observedGeneration: c.metadata.generation ?? 0,
    },
  ];
  return [
    {
      op: 'patchStatus',
      kind: 'PodClaim',
      key: keyOf(c),
      patch: { status: { conditions } },
      precondition: { uid: c.metadata.uid! },
      why: `condition ${type}`,
    },
  ];
}

/**
 * Status as a merge patch fenced on the claim's UID only: it follows a spec write in the same
 * decision, whose new resourceVersion we do not know. Phase is derived state; safety never reads it.
 */
function statusPatch(
  c: PodClaim,
  status: PodClaimStatus,
  now: number,
  message?: string,
  observedGeneration = c.metadata.generation ?? 0,
): Write {
  const phase = status.phase ?? 'Pending';
  const prev = (c.status?.conditions ?? []).find((x) => x.type === 'Ready');
  const want = phase === 'Bound' ? 'True' : 'False';
  const ready = {
    type: 'Ready',
    status: want,
    reason: phase,
    message:
      message ??
      (phase === 'Bound'
        ? 'bound'
        : phase === 'Migrating'
          ? 'migrating'
          : phase === 'Lost'
            ? 'pod lost'
            : 'waiting for an Idle pod'),
    lastTransitionTime: prev && prev.status === want ? prev.lastTransitionTime : toTimestamp(now),
    observedGeneration,
  };
  const conditions = [...(status.conditions ?? []).filter((x) => x.type !== 'Ready'), ready];
  return {
    op: 'patchStatus',
    kind: 'PodClaim',
    key: keyOf(c),
    patch: { status: { ...status, phase, conditions, observedGeneration } },
    precondition: { uid: c.metadata.uid! },
    why: `phase ${phase}`,
  };
}

// ---------------- gather + act ----------------

export interface PodClaimDeps {
  cache: Reader;
  client: Client;
  now: () => number;
  recorder?: EventRecorder;
}

export async function gatherPodClaim(
  deps: PodClaimDeps,
  key: ObjectKey,
): Promise<PodClaimSnapshot | undefined> {
  let claim: PodClaim;
  try {
    claim = await deps.cache.get('PodClaim', key);
  } catch (e) {
    if (isApiError(e, 'NotFound')) return undefined;
    throw e;
  }
  const ns = key.namespace;
  let pool: PodPool | undefined;
  try {
    pool = await deps.cache.get('PodPool', { namespace: ns, name: claim.spec.poolName });
  } catch (e) {
    if (!isApiError(e, 'NotFound')) throw e;
  }
  // Only the pods this claim can touch: the ones it references, the ones labelled for it, and —
  // when it binds or migrates — the oldest Idle candidates. Reading the whole pool on every
  // reconcile would make a pool of N claims cost O(N^2).
  const pods = new Map<string, Pod>();
  const add = (p: Pod) => pods.set(p.metadata.name, p);
  for (const name of [claim.spec.podName, claim.spec.sourcePod]) {
    if (!name) continue;
    const cached = await getOrUndefined(deps.cache.get('Pod', { namespace: ns, name }));
    // A cache NotFound may just be lag: ask the server (P2's live confirmation happens below too).
    const pod = cached ?? (await getOrUndefined(deps.client.get('Pod', { namespace: ns, name })));
    if (pod) add(pod);
  }
  const labelled = await deps.cache.list('Pod', {
    namespace: ns,
    labelSelector: { matchLabels: { [LABEL_CLAIMED_BY]: claim.metadata.name } },
  });
  for (const p of labelled.items) add(p);
  const deleting = Boolean(claim.metadata.deletionTimestamp);
  const wantsPod = !claim.spec.podName || claim.metadata.annotations?.[ANNOTATION_MIGRATE] !== undefined;
  if (!deleting && wantsPod && !claim.spec.sourcePod) {
    const idle = await deps.cache.list('Pod', {
      namespace: ns,
      labelSelector: { matchLabels: { [LABEL_POOL]: claim.spec.poolName, [LABEL_STATE]: 'Idle' } },
    });
    const none = new ClaimIndex([]);
    for (const p of bindCandidates(claim.spec.poolName, idle.items, none).slice(0, CANDIDATE_WINDOW)) add(p);
    const wanted = claim.metadata.annotations?.[ANNOTATION_MIGRATE_TO];
    const named = wanted ? idle.items.find((p) => p.metadata.name === wanted) : undefined;
    if (named) add(named);
  }
  // References to those pods (P1, P6). Finalize decides on a live view: releasing a pod another
  // claim holds would break P1, and a claim going away is rare enough to list the namespace.
  let claims: PodClaim[];
  if (deleting) {
    claims = (await deps.client.list('PodClaim', { namespace: ns })).items;
  } else {
    const byUid = new Map<string, PodClaim>([[claim.metadata.uid ?? claim.metadata.name, claim]]);
    for (const name of pods.keys()) {
      for (const field of ['spec.podName', 'spec.sourcePod']) {
        const refs = await deps.cache.list('PodClaim', { namespace: ns, fieldSelector: { [field]: name } });
        for (const r of refs.items) byUid.set(r.metadata.uid ?? r.metadata.name, r);
      }
    }
    claims = [...byUid.values()];
  }
  const snap: PodClaimSnapshot = { claim, pool, pods: [...pods.values()], claims, now: deps.now() };
  if (claim.spec.podName) {
    const cached = pods.get(claim.spec.podName);
    // Anything but "labelled ours" is confirmed live before deciding on it.
    if (!(cached && !isDeleting(cached) && isClaimedBy(cached, claim))) {
      const pod = await getOrUndefined(deps.client.get('Pod', { namespace: ns, name: claim.spec.podName }));
      snap.liveCurrent = pod ? { found: true, pod } : { found: false };
      if (pod) pods.set(pod.metadata.name, pod);
      snap.pods = [...pods.values()];
      // Whether that label takes the pod away depends on the claim it names (P7): read it live.
      const labelled = pod && !isDeleting(pod) && !isClaimedBy(pod, claim) ? claimedBy(pod) : undefined;
      if (labelled !== undefined) {
        const holder = await getOrUndefined(deps.client.get('PodClaim', { namespace: ns, name: labelled }));
        snap.labelHolder = holder ? { found: true, claim: holder } : { found: false };
      }
    }
  }
  snap.now = deps.now();
  return snap;
}

export async function reconcilePodClaim(
  deps: PodClaimDeps,
  key: ObjectKey,
): Promise<{ requeueAfterMs?: number }> {
  const snap = await gatherPodClaim(deps, key);
  if (!snap) return {};
  const d = decidePodClaim(snap);
  const res = await applyDecision(deps.client, d, deps.recorder);
  if (res.failed) return failedResult(res.failed.error);
  return d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs };
}
