// PodClaimSet decisions (pure): scale out (with a guard against duplicates from a stale cache:
// creations and deletions are decided on a live view only), scale in (P4), status counts for the
// scale subresource.
import { podNameOf } from '../../api/claim-binding.ts';
import { setCondition } from '../../api/conditions.ts';
import { FINALIZER_RELEASE, LABEL_CLAIM_SET } from '../../api/constants.ts';
import { type Decision, type EventSpec, event, type Write } from '../../api/decision.ts';
import { deepEqual } from '../../api/json.ts';
import { formatSelector } from '../../api/labels.ts';
import { keyOf } from '../../api/meta.ts';
import type { PodClaim, PodClaimSet, PodClaimSetStatus } from '../../api/types.ts';
import { nextClaimNames } from '../../claimset/claim-names.ts';
import { isMigrating } from '../../claimset/scale-in.ts';
import { SAFETY_RULES, type SafetyRules } from '../safety-rules.ts';

export interface PodClaimSetSnapshot {
  set: PodClaimSet;
  /** Every claim in the namespace (owned ones are picked by owner UID). */
  claims: PodClaim[];
  /** True when `claims` came from a live list, not a cache. */
  live: boolean;
  now: number;
}

/** Creations or deletions decided from a cache say `needsLiveRead`: re-read live, decide again. */
export type PodClaimSetDecision = Decision;

function ownedBy(set: PodClaimSet, c: PodClaim): boolean {
  return (c.metadata.ownerReferences ?? []).some(
    (r) => r.uid === set.metadata.uid && r.kind === 'PodClaimSet',
  );
}

/** Decides with core's rules unless a test hands in `rules` with one broken on purpose. */
export function decidePodClaimSet(
  s: PodClaimSetSnapshot,
  rules: SafetyRules = SAFETY_RULES,
): PodClaimSetDecision {
  const set = s.set;
  if (set.metadata.deletionTimestamp) return { writes: [], events: [] };
  const owned = s.claims.filter((c) => ownedBy(set, c));
  const active = owned.filter((c) => !c.metadata.deletionTimestamp);
  const want = set.spec.replicas;
  const writes: Write[] = [];
  const events: EventSpec[] = [];
  let blocked = 0;
  if (active.length < want) {
    if (!s.live) return { writes: [], events: [], needsLiveRead: true };
    const taken = new Set(s.claims.map((c) => c.metadata.name));
    for (const name of nextClaimNames(
      set.metadata.name,
      set.metadata.uid ?? '',
      taken,
      want - active.length,
    )) {
      writes.push({ op: 'create', object: newClaim(set, name), why: `scale out to ${want}` });
      events.push(event(set, 'Normal', 'ClaimCreated', `created claim ${name}`));
    }
  } else if (active.length > want) {
    if (!s.live) return { writes: [], events: [], needsLiveRead: true };
    const choice = rules.chooseScaleIn(active, active.length - want);
    blocked = choice.blocked;
    for (const v of choice.victims) {
      writes.push({
        op: 'delete',
        kind: 'PodClaim',
        key: keyOf(v),
        // The resourceVersion fence: a claim that started migrating since we read it is not deleted.
        preconditions: { uid: v.metadata.uid!, resourceVersion: v.metadata.resourceVersion! },
        why: `scale in to ${want}`,
      });
      events.push(
        event(
          set,
          'Normal',
          'ClaimDeleted',
          `deleted claim ${v.metadata.name} (${v.status?.phase ?? 'Pending'})`,
        ),
      );
    }
    if (blocked > 0) {
      events.push(
        event(set, 'Warning', 'ScaleInBlocked', `${blocked} claim(s) to remove are migrating; waiting`),
      );
    }
  }
  const status = statusFor(set, active, blocked, s.now);
  if (!deepEqual(status, set.status ?? {})) {
    writes.push({
      op: 'patchStatus',
      kind: 'PodClaimSet',
      key: keyOf(set),
      patch: { status },
      precondition: { uid: set.metadata.uid! },
      why: 'status',
    });
  }
  const d: PodClaimSetDecision = { writes, events };
  if (blocked > 0) d.requeueAfterMs = 5000;
  return d;
}

function newClaim(set: PodClaimSet, name: string): PodClaim {
  return {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodClaim',
    metadata: {
      name,
      namespace: set.metadata.namespace ?? '',
      labels: { ...(set.spec.template.metadata?.labels ?? {}), [LABEL_CLAIM_SET]: set.metadata.name },
      // Created with the finalizer: a claim can never bind a pod before it can release it.
      finalizers: [FINALIZER_RELEASE],
      ownerReferences: [
        {
          apiVersion: 'claimkit.dev/v1alpha1',
          kind: 'PodClaimSet',
          name: set.metadata.name,
          uid: set.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: claimSpecFromTemplate(set),
  };
}

/** The template's claim spec: the pool, and podMetadata and lostPolicy when the template has them. */
function claimSpecFromTemplate(set: PodClaimSet): PodClaim['spec'] {
  const t = set.spec.template.spec;
  return {
    poolName: t.poolName,
    ...(t.podMetadata ? { podMetadata: JSON.parse(JSON.stringify(t.podMetadata)) } : {}),
    ...(t.lostPolicy ? { lostPolicy: t.lostPolicy } : {}),
  };
}

function statusFor(set: PodClaimSet, active: PodClaim[], blocked: number, now: number): PodClaimSetStatus {
  const bound = active.filter((c) => c.status?.phase === 'Bound' && podNameOf(c)).length;
  const migrating = active.filter(isMigrating).length;
  const lost = active.filter((c) => c.status?.phase === 'Lost').length;
  const pending = active.length - bound - migrating - lost;
  const allBound = active.length === set.spec.replicas && bound === set.spec.replicas;
  const cond = (type: string, ok: boolean, reason: string, message: string) => ({
    type,
    status: ok ? ('True' as const) : ('False' as const),
    reason,
    message,
    observedGeneration: set.metadata.generation ?? 0,
  });
  const ready = cond(
    'Ready',
    allBound,
    allBound ? 'AllBound' : 'Progressing',
    `${bound}/${set.spec.replicas} claims bound`,
  );
  const blockedCond = cond(
    'ScaleInBlocked',
    blocked > 0,
    blocked > 0 ? 'Migrating' : 'NotBlocked',
    blocked > 0 ? `${blocked} claim(s) to remove are migrating` : 'scale-in is not blocked',
  );
  return {
    replicas: active.length,
    boundReplicas: bound,
    pending: Math.max(0, pending),
    migrating,
    lost,
    labelSelector: formatSelector(set.spec.selector),
    observedGeneration: set.metadata.generation ?? 0,
    conditions: setCondition(setCondition(set.status?.conditions, ready, now), blockedCond, now),
  };
}
