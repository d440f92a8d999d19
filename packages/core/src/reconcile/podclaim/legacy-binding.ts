// Claims stored by a release that kept the binding in spec (podName, nodeName, sourcePod, the pod's
// UID in the claimkit.dev/pod-uid annotation, and lostPolicy Fail's claimkit.dev/lost-at mark) get it
// moved to status before anything else is decided for them: first one status write recording it (a
// CAS; api/claim-binding.ts reads status from then on), then one write clearing spec and those
// annotations. Until both landed nothing else changes the binding, so spec and status never
// disagree, and a claim keeps its pod across the upgrade.
import { bindingPatch, hasLegacyBinding, legacyBinding, statusBinding } from '../../api/claim-binding.ts';
import { ANNOTATION_POD_UID } from '../../api/constants.ts';
import type { Decision, Write } from '../../api/decision.ts';
import { keyOf } from '../../api/meta.ts';
import type { PodClaim } from '../../api/types.ts';
import { ANNOTATION_LOST_AT } from '../../pool/lost-policy.ts';

const isEmpty = (b: object) => Object.keys(b).length === 0;

/** The writes that move a legacy claim's binding, whichever is due; undefined for other claims. */
export function moveLegacyBinding(c: PodClaim): Decision | undefined {
  const lostAt = c.metadata.annotations?.[ANNOTATION_LOST_AT];
  if (!hasLegacyBinding(c) && lostAt === undefined) return undefined;
  const legacy = legacyBinding(c);
  // The lost-at mark says what status.lostTime says (the claim lost its pod): it becomes that.
  const lostTime = lostAt !== undefined && !c.status?.lostTime ? { lostTime: lostAt } : {};
  if (!isEmpty(legacy) && isEmpty(statusBinding(c))) {
    const w: Write = {
      op: 'patchStatus',
      kind: 'PodClaim',
      key: keyOf(c),
      patch: { status: { ...bindingPatch(legacy), ...lostTime } },
      precondition: { uid: c.metadata.uid!, resourceVersion: c.metadata.resourceVersion! },
      why: 'move the binding from spec to status',
    };
    return { writes: [w], events: [], requeueAfterMs: 0 };
  }
  const { podName: _p, nodeName: _n, sourcePod: _s, ...spec } = c.spec;
  const annotations = { ...(c.metadata.annotations ?? {}) };
  delete annotations[ANNOTATION_POD_UID];
  delete annotations[ANNOTATION_LOST_AT];
  const writes: Write[] = [];
  if (!isEmpty(lostTime))
    writes.push({
      op: 'patchStatus',
      kind: 'PodClaim',
      key: keyOf(c),
      patch: { status: lostTime },
      precondition: { uid: c.metadata.uid! },
      why: 'lost-at mark to status.lostTime',
    });
  writes.push({
    op: 'update',
    object: { ...c, metadata: { ...c.metadata, annotations }, spec },
    why: 'clear the legacy binding from spec',
  });
  return { writes, events: [], requeueAfterMs: 0 };
}
