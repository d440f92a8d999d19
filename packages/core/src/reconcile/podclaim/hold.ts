// P2 and P7: whether a claim still holds the pod its binding references.

import { type ClaimBinding, referencesPod } from '../../api/claim-binding.ts';
import { parseTimestamp } from '../../api/meta.ts';
import { isDeleting, isPodFinished } from '../../api/pod-predicates.ts';
import type { Pod, PodClaim } from '../../api/types.ts';
import { boundPodUid, isReplacement } from '../../pool/bound-pod.ts';
import type { ClaimIndex } from '../../pool/claim-index.ts';
import { claimedBy, claimedByUid, isClaimedBy } from '../../pool/pods.ts';
import type { ClaimLookup } from './snapshot.ts';

/** How a claim stands with the pod its binding references. */
export type PodHold =
  | { kind: 'ours' }
  | { kind: 'unlabelled'; pod: Pod }
  | { kind: 'foreignLabel'; pod: Pod; labelled: string; why: string }
  | { kind: 'lost'; why: string }
  /** The pod is labelled for another claim we have not read yet. */
  | { kind: 'unknown' };

/**
 * P2 and P7: a claim keeps the pod its binding references unless the pod is gone, being deleted or
 * finished (phase Succeeded or Failed: it never runs again, as good as gone), or
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
  // The pod the claim bound was deleted and another created under its name (kubectl replace
  // --force, a person's delete + create): whatever its labels say, it is not the claim's pod.
  if (isReplacement(c, cur))
    return { kind: 'lost', why: `was replaced (uid ${cur.metadata.uid}, bound uid ${boundPodUid(c)})` };
  if (isPodFinished(cur)) return { kind: 'lost', why: `has finished (phase ${cur.status?.phase})` };
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
  if (!referencesPod(holder, cur.metadata.name))
    return { kind: 'foreignLabel', pod: cur, labelled, why: 'does not reference it' };
  return { kind: 'lost', why: `is claimed by ${labelled}` };
}

/** P2: a claim whose pod is lost stops referencing it (and binds again); a migration's source stays. */
export function dropPodReference(b: ClaimBinding): ClaimBinding {
  return b.sourcePod ? { sourcePod: b.sourcePod } : {};
}

function isOlder(a: PodClaim, b: PodClaim): boolean {
  const ta = parseTimestamp(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTimestamp(b.metadata.creationTimestamp) ?? 0;
  return ta !== tb ? ta < tb : a.metadata.name < b.metadata.name;
}
