// PodClaim decisions as an ordered chain of plain checks (cert-manager's trigger policies): the
// first check that has something to do decides; each decision is one resumable step, so whatever
// prefix of its writes landed, the next decision (from a fresh read) continues from there.

import { bindingOf, type ClaimBinding } from '../../api/claim-binding.ts';
import { setCondition } from '../../api/conditions.ts';
import { ANNOTATION_MIGRATE, ANNOTATION_MIGRATE_TO } from '../../api/constants.ts';
import { type Decision, event } from '../../api/decision.ts';
import { keyOf, toTimestamp } from '../../api/meta.ts';
import { isDeleting, isPodFinished } from '../../api/pod-predicates.ts';
import type { Pod, PodClaim, PodClaimPhase, PodClaimStatus } from '../../api/types.ts';
import { bindCandidates, pickCandidate } from '../../pool/bind-candidates.ts';
import { ClaimIndex } from '../../pool/claim-index.ts';
import { hasHeldPodHints, heldPodHints } from '../../pool/disruption-hints.ts';
import { lostPolicyOf } from '../../pool/lost-policy.ts';
import {
  isClaimedBy,
  isIdleAndReady,
  labelOwnedPodWrite,
  poolOf,
  stateOf,
  unlabelPodWrite,
} from '../../pool/pods.ts';
import { isStranded, NO_UNSERVABLE_NODES } from '../../pool/serving.ts';
import { type PodRelease, poolRelease } from '../../pool/template-hash.ts';
import { SAFETY_RULES, type SafetyRules } from '../safety-rules.ts';
import { podLostCondition } from './bound-condition.ts';
import {
  bindClaim,
  bindingWrite,
  conditionWrites,
  ensurePhase,
  hasReleaseFinalizer,
  statusPatch,
  withReleaseFinalizer,
} from './claim-writes.ts';
import { releaseStrays } from './finalize.ts';
import { foreignLabelEvents } from './foreign-label.ts';
import { moveLegacyBinding } from './legacy-binding.ts';
import { continueMigration, repairSelfMigration, startMigration } from './migration.ts';
import { type PodClaimSnapshot, WAIT_MS } from './snapshot.ts';
import { holdLost, waitDecision, waitReason } from './waiting.ts';

/** What every check reads, derived once from the snapshot. */
export interface PodClaimContext {
  s: PodClaimSnapshot;
  c: PodClaim;
  /** The claim's binding (status, or a legacy claim's spec). */
  b: ClaimBinding;
  ns: string;
  index: ClaimIndex;
  byName: Map<string, Pod>;
  /** How released pods leave (the pool's policy; outdated-template pods are deleted). */
  policy: PodRelease;
  /** Pods labelled for this claim. */
  labelledOurs: Pod[];
  /** Pods labelled for this claim that it does not reference as its pod. */
  strays: Pod[];
  migrationRequested: boolean;
  rules: SafetyRules;
}

/** One check: a decision when it applies, undefined to let the next check look. */
type Check = (x: PodClaimContext) => Decision | undefined;

function podClaimContext(s: PodClaimSnapshot, rules: SafetyRules = SAFETY_RULES): PodClaimContext {
  const c = s.claim;
  const labelledOurs = s.pods.filter((p) => isClaimedBy(p, c));
  const b = bindingOf(c);
  return {
    s,
    c,
    b,
    ns: c.metadata.namespace ?? '',
    index: new ClaimIndex(s.claims),
    byName: new Map(s.pods.map((p) => [p.metadata.name, p])),
    policy: poolRelease(s.pool, s.pool && rules.judgePoolSource(s.pool, s.poolSource)),
    labelledOurs,
    strays: labelledOurs.filter((p) => p.metadata.name !== b.podName && !isDeleting(p)),
    migrationRequested: c.metadata.annotations?.[ANNOTATION_MIGRATE] !== undefined,
    rules,
  };
}

/** P3: a deleting claim only finalizes. */
const finalizeWhenDeleting: Check = (x) =>
  x.c.metadata.deletionTimestamp
    ? x.rules.finalize(x.s, x.index, x.byName, x.labelledOurs, x.policy, x.rules)
    : undefined;

/** A claim stored by an earlier release: its binding moves from spec to status first. */
const moveBindingToStatus: Check = ({ c }) => moveLegacyBinding(c);

/**
 * A claim carries the release finalizer before it holds a pod: a write of its own, since the bind's
 * only claim write is to status (claimkit's clients create claims with it, so they never need it).
 */
const addReleaseFinalizer: Check = ({ c }) => {
  if (hasReleaseFinalizer(c)) return undefined;
  return {
    writes: [{ op: 'update', object: withReleaseFinalizer(c), why: 'add release finalizer' }],
    events: [],
    requeueAfterMs: 0,
  };
};

/** P2, P7: the pod the claim is bound to is still there and ours, or the claim says why not. */
const keepReferencedPod: Check = ({ s, c, b, index, byName, rules }) => {
  if (!b.podName) return undefined;
  const cached = byName.get(b.podName);
  const cur = s.liveCurrent ? (s.liveCurrent.found ? s.liveCurrent.pod : undefined) : cached;
  const hold = rules.judgeReferencedPod(c, cur, index, s.labelHolder);
  if (hold.kind === 'ours') return undefined;
  // Only a live read may decide; the cache may simply not have seen the pod or its label yet.
  if (!s.liveCurrent || hold.kind === 'unknown') return { writes: [], events: [], requeueAfterMs: 0 };
  if (hold.kind === 'unlabelled') {
    // Our pod lost its label (another claim's finalizer removes only its own): label it again.
    return { writes: [labelOwnedPodWrite(hold.pod, c)], events: [], requeueAfterMs: 0 };
  }
  if (hold.kind === 'foreignLabel') {
    // P7: a label naming a claim that does not hold the pod never takes it from us. Remove it
    // (never relabel A->B in one write, P1); the next pass labels the pod ours.
    const msg =
      `pod ${b.podName} was labelled for ${hold.labelled}, which ${hold.why}; ` +
      `the label is removed and claim ${c.metadata.name} keeps the pod`;
    // The claim the label names (if it exists) is told too: its own reconcile will not see the label.
    const named = s.labelHolder?.found ? s.labelHolder.claim : undefined;
    return {
      writes: [unlabelPodWrite(hold.pod, `drop label: ${hold.labelled} ${hold.why}`)],
      events: foreignLabelEvents(hold.pod, [c, named], msg),
      requeueAfterMs: 0,
    };
  }
  const binding = rules.dropPodReference(b);
  const why = `pod ${b.podName} ${hold.why}`;
  const conditions = setCondition(
    c.status?.conditions,
    podLostCondition(why, c.metadata.generation ?? 0),
    s.now,
  );
  const status: PodClaimStatus = { ...c.status, phase: 'Lost', lostTime: toTimestamp(s.now), conditions };
  const next = lostPolicyOf(c) === 'Fail' ? 'stays Lost (lostPolicy Fail)' : 'will bind again';
  return {
    writes: [bindingWrite(c, binding, `clear podName: pod ${hold.why}`, statusPatch(c, status, s.now))],
    events: [event(c, 'Warning', 'Lost', `${why}; claim is Lost and ${next}`)],
    requeueAfterMs: 0,
  };
};

/** A migration in progress: drain and release the source (or repair sourcePod == podName). */
const continueMigrationInProgress: Check = ({ s, c, b, index, byName, policy, rules }) => {
  if (!b.sourcePod) return undefined;
  if (b.sourcePod === b.podName) return repairSelfMigration(c);
  return continueMigration(s, index, byName, policy, rules);
};

/**
 * No pod yet: adopt a pod we CAS'd but did not record (resume), release other strays, or bind.
 * Only from a pool that exists, and never once lostPolicy Fail has made the claim Lost for good.
 */
const bindWhenUnbound: Check = ({ s, c, b, ns, index, policy, strays, rules }) => {
  if (b.podName) return undefined;
  const lostForGood = rules.isLostForGood(c);
  const mayBind = s.pool !== undefined && !lostForGood;
  const adopt = strays.find((p) => isAdoptable(p, c, ns, index));
  if (adopt && mayBind) return bindClaim(c, adopt, [], s.now, 'resume bind');
  if (strays.length > 0) return releaseStrays(strays, policy, index, c, rules);
  if (lostForGood) return holdLost(c, s.now);
  const candidates = mayBind ? bindCandidates(c.spec.poolName, s.pods, index, s.unservable) : [];
  // On its turn (waiting-queue.ts) the claim takes the candidate after the older claims' ones.
  const pod = s.turn === undefined ? pickCandidate(candidates, c) : candidates[s.turn];
  if (!pod) {
    const phase: PodClaimPhase = c.status?.phase === 'Lost' ? 'Lost' : 'Pending';
    return waitDecision(c, phase, waitReason(c, s.pool), s.now);
  }
  return bindClaim(c, pod, [rules.bindPodWrite(pod, c)], s.now, 'bind');
};

/** A migration target we CAS'd but did not record yet, when a migration is requested. */
function adoptableTarget({ c, ns, index, strays, migrationRequested }: PodClaimContext): Pod | undefined {
  if (!migrationRequested) return undefined;
  return strays.find((p) => isAdoptable(p, c, ns, index));
}

/**
 * A stray labelled ours that we CAS'd but did not record (a bind or migration interrupted): Bound,
 * referenced by no other claim, and not finished (a finished pod is lost to us, released instead).
 */
function isAdoptable(p: Pod, c: PodClaim, ns: string, index: ClaimIndex): boolean {
  return !index.otherReference(ns, p.metadata.name, c) && stateOf(p) === 'Bound' && !isPodFinished(p);
}

/** Pods labelled ours that we do not reference (other than an adoptable target) are released. */
const releaseOtherStrays: Check = (x) => {
  const adopted = adoptableTarget(x);
  const toRelease = x.strays.filter((p) => p !== adopted);
  return toRelease.length > 0 ? releaseStrays(toRelease, x.policy, x.index, x.c, x.rules) : undefined;
};

/** A requested migration starts once a target exists (named by migrate-to, or the best Idle pod). */
const startRequestedMigration: Check = (x) => {
  const { s, c, b, ns, index, byName } = x;
  if (!x.migrationRequested || !b.podName) return undefined;
  if (!s.pool) {
    // Migration targets come only from the claim's own pool, which must exist.
    const msg = `pool ${c.spec.poolName} does not exist: no migration target`;
    return {
      writes: conditionWrites(c, 'Migrating', 'False', 'PoolNotFound', msg, s.now),
      events: [],
      requeueAfterMs: WAIT_MS,
    };
  }
  const adopted = adoptableTarget(x);
  if (adopted) return startMigration(c, byName.get(b.podName), adopted, [], s.now);
  const wanted = c.metadata.annotations?.[ANNOTATION_MIGRATE_TO];
  let target: Pod | undefined;
  if (wanted) {
    const p = byName.get(wanted);
    if (
      p &&
      isIdleAndReady(p) &&
      !isStranded(p, s.unservable ?? NO_UNSERVABLE_NODES) &&
      poolOf(p) === c.spec.poolName &&
      !index.isReferenced(ns, wanted)
    )
      target = p;
  } else {
    target = pickCandidate(
      bindCandidates(c.spec.poolName, s.pods, index, s.unservable).filter(
        (p) => p.metadata.name !== b.podName,
      ),
      c,
    );
  }
  if (!target) {
    if (c.status?.phase !== 'Bound') return ensurePhase(c, 'Bound', s.now, 0, `bound to ${b.podName}`);
    const msg = wanted
      ? `migration target ${wanted} is not an Idle pod of pool ${c.spec.poolName}`
      : 'no Idle pod to migrate to';
    return {
      writes: conditionWrites(c, 'Migrating', 'False', 'MigrationPending', msg, s.now),
      events: [event(c, 'Warning', 'MigrationPending', msg)],
      requeueAfterMs: WAIT_MS,
    };
  }
  return startMigration(c, byName.get(b.podName), target, [x.rules.bindPodWrite(target, c)], s.now);
};

/** status.nodeName follows the pod's node (a pod scheduled after the bind). */
const syncNodeName: Check = ({ c, b, byName }) => {
  const pod = b.podName ? byName.get(b.podName) : undefined;
  if (!pod?.spec.nodeName || pod.spec.nodeName === b.nodeName) return undefined;
  return { writes: [bindingWrite(c, { ...b, nodeName: pod.spec.nodeName }, 'sync nodeName')], events: [] };
};

/**
 * A pod bound before claimkit set disruption hints gets them (one CAS patch, hints only: its
 * labels and the claim's podMetadata are left as the bind wrote them).
 */
const ensureHeldPodHints: Check = ({ c, b, byName }) => {
  const pod = b.podName ? byName.get(b.podName) : undefined;
  if (!pod || !isClaimedBy(pod, c) || isDeleting(pod) || hasHeldPodHints(pod)) return undefined;
  return {
    writes: [
      {
        op: 'patch',
        kind: 'Pod',
        key: keyOf(pod),
        patch: { metadata: { annotations: heldPodHints() } },
        precondition: { resourceVersion: pod.metadata.resourceVersion!, uid: pod.metadata.uid! },
        why: `disruption hints on pod ${pod.metadata.name}`,
      },
    ],
    events: [],
  };
};

const reportBound: Check = ({ s, c, b }) =>
  ensurePhase(c, 'Bound', s.now, undefined, `bound to ${b.podName}`);

/** The checks, in the order they are asked. */
const POD_CLAIM_CHECKS: readonly Check[] = [
  finalizeWhenDeleting,
  moveBindingToStatus,
  addReleaseFinalizer,
  keepReferencedPod,
  continueMigrationInProgress,
  bindWhenUnbound,
  releaseOtherStrays,
  startRequestedMigration,
  syncNodeName,
  ensureHeldPodHints,
  reportBound,
];

/** Decides with core's rules unless a test hands in `rules` with one broken on purpose. */
export function decidePodClaim(s: PodClaimSnapshot, rules: SafetyRules = SAFETY_RULES): Decision {
  const x = podClaimContext(s, rules);
  for (const check of POD_CLAIM_CHECKS) {
    const d = check(x);
    if (d) return d;
  }
  return { writes: [], events: [] };
}
