// P3: a deleting claim's finalizer always completes; and the release of pods labelled ours that we
// do not reference. A pod another claim references keeps that claim: only our label goes.
import { bindingOf } from '../../api/claim-binding.ts';
import { FINALIZER_RELEASE } from '../../api/constants.ts';
import { type Decision, type EventSpec, event, type Write } from '../../api/decision.ts';
import type { Pod, PodClaim, ReleasePolicy } from '../../api/types.ts';
import type { ClaimIndex } from '../../pool/claim-index.ts';
import { claimedBy, isClaimedBy, type releasePodWrite, stateOf, unlabelPodWrite } from '../../pool/pods.ts';
import type { PodRelease } from '../../pool/template-hash.ts';
import { foreignLabelEvents, ownLabelOnOthersPodMessage } from './foreign-label.ts';
import type { PodClaimSnapshot } from './snapshot.ts';

/** P3: always completes. Pods we own are released; a pod another claim references keeps that claim. */
export function finalize(
  s: PodClaimSnapshot,
  index: ClaimIndex,
  byName: Map<string, Pod>,
  labelledOurs: Pod[],
  policy: PodRelease | ReleasePolicy,
  rules: { releasePodWrite: typeof releasePodWrite },
): Decision {
  const c = s.claim;
  const ns = c.metadata.namespace ?? '';
  const writes: Write[] = [];
  const repairs: EventSpec[] = [];
  const seen = new Set<string>();
  const b = bindingOf(c);
  const involved = [b.podName, b.sourcePod, ...labelledOurs.map((p) => p.metadata.name)];
  for (const name of involved) {
    if (!name || seen.has(name)) continue;
    seen.add(name);
    const pod = byName.get(name);
    if (!pod) continue;
    const ours = isClaimedBy(pod, c);
    const other = index.otherReference(ns, name, c);
    if (other) {
      if (ours) {
        writes.push(
          unlabelPodWrite(pod, `finalize: ${name} belongs to ${other.claim.metadata.name}; drop our label`),
        );
        repairs.push(
          ...foreignLabelEvents(pod, [c, other.claim], ownLabelOnOthersPodMessage(pod, c, other.claim)),
        );
      }
      continue;
    }
    if (ours || claimedBy(pod) === undefined) {
      if (claimedBy(pod) === undefined && stateOf(pod) === 'Idle') continue;
      writes.push(rules.releasePodWrite(pod, policy, `finalize: release ${name}`));
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
    events: [
      ...repairs,
      ...(writes.length > 0
        ? [event(c, 'Normal', 'Finalized', `released ${writes.length - 1} pod(s); finalizer removed`)]
        : []),
    ],
  };
}

export function releaseStrays(
  strays: Pod[],
  policy: PodRelease | ReleasePolicy,
  index: ClaimIndex,
  c: PodClaim,
  rules: { releasePodWrite: typeof releasePodWrite },
): Decision {
  const ns = c.metadata.namespace ?? '';
  const events: EventSpec[] = [];
  const writes = strays.map((p) => {
    const other = index.otherReference(ns, p.metadata.name, c);
    if (!other)
      return rules.releasePodWrite(
        p,
        policy,
        `release stray pod ${p.metadata.name} labelled for ${c.metadata.name}`,
      );
    // The claim that references the pod would have removed this label itself (with a Warning): the
    // same repair from this side leaves the same Warning.
    events.push(...foreignLabelEvents(p, [c, other.claim], ownLabelOnOthersPodMessage(p, c, other.claim)));
    return unlabelPodWrite(p, `pod ${p.metadata.name} is referenced by another claim: drop our label`);
  });
  return { writes, events, requeueAfterMs: 0 };
}
