// The claim's own writes: the release finalizer, status with its Ready condition, and the bind (the
// pod's CAS first, then one status write recording the binding with the phase: two writes, either
// prefix resumable).

import { bindingPatch, type ClaimBinding, podNameOf } from '../../api/claim-binding.ts';
import { findCondition, hasCondition, setCondition } from '../../api/conditions.ts';
import { FINALIZER_RELEASE } from '../../api/constants.ts';
import { type Decision, event, type Write } from '../../api/decision.ts';
import { keyOf, toTimestamp } from '../../api/meta.ts';
import type { Pod, PodClaim, PodClaimPhase, PodClaimStatus } from '../../api/types.ts';
import { podAddress } from '../../pool/pod-address.ts';
import { boundCondition, CONDITION_BOUND } from './bound-condition.ts';

export function hasReleaseFinalizer(c: PodClaim): boolean {
  return (c.metadata.finalizers ?? []).includes(FINALIZER_RELEASE);
}

/** The claim with the release finalizer added (a write of its own, before the claim holds a pod). */
export function withReleaseFinalizer(c: PodClaim): PodClaim {
  if (hasReleaseFinalizer(c)) return c;
  return {
    ...c,
    metadata: { ...c.metadata, finalizers: [...(c.metadata.finalizers ?? []), FINALIZER_RELEASE] },
  };
}

/**
 * The write that changes a claim's binding: one status write, a compare-and-swap on the claim's
 * resourceVersion (a stale view records nothing), carrying `b` as the whole binding and, when
 * given, the status `statusWrite` builds (phase, conditions, address...).
 */
export function bindingWrite(c: PodClaim, b: ClaimBinding, why: string, status?: Write): Write {
  const rest = status?.op === 'patchStatus' ? ((status.patch as { status?: object }).status ?? {}) : {};
  return {
    op: 'patchStatus',
    kind: 'PodClaim',
    key: keyOf(c),
    patch: { status: { ...rest, ...bindingPatch(b) } },
    precondition: { uid: c.metadata.uid!, resourceVersion: c.metadata.resourceVersion! },
    why,
  };
}

/** The claim's binding to `pod`: its name, node and UID. */
export function bindingTo(pod: Pod, sourcePod?: string): ClaimBinding {
  return {
    podName: pod.metadata.name,
    ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    ...(pod.metadata.uid ? { podUID: pod.metadata.uid } : {}),
    ...(sourcePod ? { sourcePod } : {}),
  };
}

/** A bind: the pod's CAS (`podWrites`, empty when resuming), then one status write of the claim. */
export function bindClaim(c: PodClaim, pod: Pod, podWrites: Write[], now: number, why: string): Decision {
  const generation = c.metadata.generation ?? 0;
  const conditions = setCondition(c.status?.conditions, boundCondition(pod.metadata.name, generation), now);
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
      bindingWrite(c, bindingTo(pod), `${why}: podName=${pod.metadata.name}`, statusPatch(c, status, now)),
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
  const podName = podNameOf(c);
  const boundStale = phase === 'Bound' && bound !== undefined && bound.status !== 'True' && podName;
  const upToDate =
    c.status?.phase === phase &&
    c.status.observedGeneration === (c.metadata.generation ?? 0) &&
    cond?.status === want &&
    cond.reason === phase &&
    !boundStale;
  const conditions = boundStale
    ? setCondition(c.status?.conditions, boundCondition(podName ?? '', c.metadata.generation ?? 0), now)
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
 * Status as a merge patch fenced on the claim's UID only, never carrying the binding (only
 * `bindingWrite`, a CAS, writes that): phase and conditions are derived state; safety never reads them.
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
  const { podName: _p, nodeName: _n, podUID: _u, sourcePod: _s, ...derived } = status;
  return {
    op: 'patchStatus',
    kind: 'PodClaim',
    key: keyOf(c),
    patch: { status: { ...derived, phase, conditions, observedGeneration, ...address } },
    precondition: { uid: c.metadata.uid! },
    why: `phase ${phase}`,
  };
}
