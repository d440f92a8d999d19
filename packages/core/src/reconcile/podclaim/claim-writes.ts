// The claim's own writes: spec with the release finalizer, status with its Ready condition, and the
// bind (pod CAS first, then spec, then status: three writes, any prefix resumable).

import { findCondition, hasCondition, setCondition } from '../../api/conditions.ts';
import { ANNOTATION_POD_UID, FINALIZER_RELEASE } from '../../api/constants.ts';
import { type Decision, event, type Write } from '../../api/decision.ts';
import { deepEqual } from '../../api/json.ts';
import { keyOf, toTimestamp } from '../../api/meta.ts';
import type { Pod, PodClaim, PodClaimPhase, PodClaimStatus } from '../../api/types.ts';
import { boundPodRecord } from '../../pool/bound-pod.ts';
import { unmarkedLost } from '../../pool/lost-policy.ts';
import { podAddress } from '../../pool/pod-address.ts';
import { boundCondition, CONDITION_BOUND } from './bound-condition.ts';

export function hasReleaseFinalizer(c: PodClaim): boolean {
  return (c.metadata.finalizers ?? []).includes(FINALIZER_RELEASE);
}

/** The claim with `spec`, and with the release finalizer (a bind adds it in the same write). */
export function withSpec(c: PodClaim, spec: PodClaim['spec']): PodClaim {
  if (hasReleaseFinalizer(c)) return { ...c, spec };
  return {
    ...c,
    metadata: { ...c.metadata, finalizers: [...(c.metadata.finalizers ?? []), FINALIZER_RELEASE] },
    spec,
  };
}

/** The claim recording `pod` (name and UID) as its pod, in the same write that sets podName to it. */
export function withPodUid(c: PodClaim, pod: Pod): PodClaim {
  const record = boundPodRecord(pod);
  if (!record) return c;
  return {
    ...c,
    metadata: {
      ...c.metadata,
      annotations: { ...(c.metadata.annotations ?? {}), [ANNOTATION_POD_UID]: record },
    },
  };
}

/** The claim without a recorded pod UID (the write that clears podName). */
export function withoutPodUid(c: PodClaim): PodClaim {
  if (c.metadata.annotations?.[ANNOTATION_POD_UID] === undefined) return c;
  const { [ANNOTATION_POD_UID]: _, ...annotations } = c.metadata.annotations;
  return { ...c, metadata: { ...c.metadata, annotations } };
}

/** The generation the server will have after writing `spec` (it bumps only on a spec change). */
export function generationAfter(c: PodClaim, spec: PodClaim['spec']): number {
  const g = c.metadata.generation ?? 0;
  return deepEqual(c.spec, spec) ? g : g + 1;
}

export function bindClaim(c: PodClaim, pod: Pod, podWrites: Write[], now: number, why: string): Decision {
  const spec = { ...c.spec, podName: pod.metadata.name, nodeName: pod.spec.nodeName ?? '' };
  const conditions = setCondition(
    c.status?.conditions,
    boundCondition(pod.metadata.name, generationAfter(c, spec)),
    now,
  );
  const status: PodClaimStatus = {
    ...c.status,
    phase: 'Bound',
    boundTime: toTimestamp(now),
    address: podAddress(pod) ?? null,
    conditions,
  };
  return {
    writes: [
      ...podWrites,
      {
        op: 'update',
        object: withSpec(withPodUid(unmarkedLost(c), pod), spec),
        why: `${why}: podName=${pod.metadata.name}`,
      },
      statusPatch(c, status, now, undefined, generationAfter(c, spec)),
    ],
    events: [
      event(c, 'Normal', 'Bound', `bound to pod ${pod.metadata.name} on node ${pod.spec.nodeName ?? ''}`),
    ],
  };
}

export function ensurePhase(
  c: PodClaim,
  phase: PodClaimPhase,
  now: number,
  requeueAfterMs: number | undefined,
  msg: string,
): Decision {
  const want = phase === 'Bound' ? 'True' : 'False';
  const cond = findCondition(c.status?.conditions, 'Ready');
  // A Bound claim whose Bound condition still says why it waited (the bind's status patch did not
  // land) gets it corrected with the phase.
  const bound = findCondition(c.status?.conditions, CONDITION_BOUND);
  const boundStale = phase === 'Bound' && bound !== undefined && bound.status !== 'True' && c.spec.podName;
  const upToDate =
    c.status?.phase === phase &&
    c.status.observedGeneration === (c.metadata.generation ?? 0) &&
    cond?.status === want &&
    cond.reason === phase &&
    !boundStale;
  const conditions = boundStale
    ? setCondition(
        c.status?.conditions,
        boundCondition(c.spec.podName ?? '', c.metadata.generation ?? 0),
        now,
      )
    : c.status?.conditions;
  const d: Decision = {
    writes: upToDate
      ? []
      : [statusPatch(c, { ...c.status, phase, ...(conditions ? { conditions } : {}) }, now, msg)],
    events: [],
  };
  if (!upToDate && phase === 'Pending' && c.status?.phase !== 'Pending') {
    d.events.push(event(c, 'Normal', 'Pending', msg));
  }
  if (requeueAfterMs !== undefined) d.requeueAfterMs = requeueAfterMs;
  return d;
}

export function conditionWrites(
  c: PodClaim,
  type: string,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: number,
): Write[] {
  const want = { type, status, reason, message, observedGeneration: c.metadata.generation ?? 0 };
  const prev = c.status?.conditions;
  // An unchanged condition is not written again (observedGeneration alone does not warrant a write).
  if (hasCondition(prev, { type, status, reason, message })) return [];
  return [
    {
      op: 'patchStatus',
      kind: 'PodClaim',
      key: keyOf(c),
      patch: { status: { conditions: setCondition(prev, want, now) } },
      precondition: { uid: c.metadata.uid! },
      why: `condition ${type}`,
    },
  ];
}

/**
 * Status as a merge patch fenced on the claim's UID only: it follows a spec write in the same
 * decision, whose new resourceVersion we do not know. Phase is derived state; safety never reads it.
 */
export function statusPatch(
  c: PodClaim,
  status: PodClaimStatus,
  now: number,
  message?: string,
  observedGeneration = c.metadata.generation ?? 0,
): Write {
  const phase = status.phase ?? 'Pending';
  const ready = {
    type: 'Ready',
    status: phase === 'Bound' ? ('True' as const) : ('False' as const),
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
    observedGeneration,
  };
  // A partial status (a repair's) keeps the claim's other conditions; the previous Ready decides
  // lastTransitionTime.
  const conditions = setCondition(status.conditions ?? c.status?.conditions, ready, now);
  // A claim without a pod (Pending, Lost) has no address: a merge patch's null removes it.
  const address = (phase === 'Pending' || phase === 'Lost') && c.status?.address ? { address: null } : {};
  return {
    op: 'patchStatus',
    kind: 'PodClaim',
    key: keyOf(c),
    patch: { status: { ...status, phase, conditions, observedGeneration, ...address } },
    precondition: { uid: c.metadata.uid! },
    why: `phase ${phase}`,
  };
}
