// A claim's trace, when tracing is on: every reconcile of the claim goes under one root span (from
// its UID, or under the span a tool named in claimkit.dev/traceparent at create); the claim's first
// spec write records that trace in the annotation (the release finalizer's or the bind's, so no
// extra write), and the root span, from the claim's creation to its first Bound, is emitted by the
// reconcile whose status write made it Bound.
import { podNameOf } from '../../api/claim-binding.ts';
import { ANNOTATION_TRACEPARENT } from '../../api/constants.ts';
import type { Decision, Write } from '../../api/decision.ts';
import { traceRootOf } from '../../api/tracing.ts';
import type { PodClaim } from '../../api/types.ts';
import type { ReconcileTrace } from '../trace-step.ts';
import type { PodClaimSnapshot } from './snapshot.ts';

const sameClaim = (o: { metadata: { namespace?: string; name: string } }, c: PodClaim) =>
  (o.metadata.namespace ?? '') === (c.metadata.namespace ?? '') && o.metadata.name === c.metadata.name;

const isClaimUpdate = (w: Write, c: PodClaim): w is Extract<Write, { op: 'update' }> =>
  w.op === 'update' && w.object.kind === 'PodClaim' && sameClaim(w.object, c);

export const podClaimTrace: ReconcileTrace<PodClaimSnapshot> = {
  root: ({ claim }) =>
    claim.metadata.uid
      ? traceRootOf(claim.metadata.uid, claim.metadata.annotations?.[ANNOTATION_TRACEPARENT])
      : undefined,

  carry(d: Decision, { claim }, traceparent) {
    const i = d.writes.findIndex((w) => isClaimUpdate(w, claim));
    if (i < 0) return d;
    const w = d.writes[i] as Extract<Write, { op: 'update' }>;
    const object = {
      ...w.object,
      metadata: {
        ...w.object.metadata,
        annotations: { ...(w.object.metadata.annotations ?? {}), [ANNOTATION_TRACEPARENT]: traceparent },
      },
    };
    const writes = [...d.writes];
    writes[i] = { ...w, object };
    return { ...d, writes };
  },

  completed({ claim, now }, d, applied) {
    if (claim.status?.boundTime || claim.status?.phase === 'Bound') return undefined;
    const bound = d.writes
      .slice(0, applied.applied)
      .find(
        (w) =>
          w.op === 'patchStatus' &&
          w.kind === 'PodClaim' &&
          w.key.name === claim.metadata.name &&
          (w.patch as { status?: { phase?: string } }).status?.phase === 'Bound',
      );
    if (!bound) return undefined;
    const created = Date.parse(claim.metadata.creationTimestamp ?? '');
    const podName =
      (bound.op === 'patchStatus'
        ? (bound.patch as { status?: { podName?: string } }).status?.podName
        : undefined) ?? podNameOf(claim);
    return {
      name: 'claim.bound',
      startTime: Number.isNaN(created) ? now : created,
      attributes: {
        'k8s.namespace.name': claim.metadata.namespace ?? '',
        'claimkit.name': claim.metadata.name,
        'claimkit.pool': claim.spec.poolName,
        ...(podName ? { 'claimkit.pod': podName } : {}),
      },
    };
  },
};
