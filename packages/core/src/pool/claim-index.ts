// Which claim references which pod, by spec.podName and spec.sourcePod (P1, P6). Deleting claims
// are excluded: a claim that is going away no longer holds a pod against a live claim.
import { keyString } from '../api/meta.ts';
import type { PodClaim } from '../api/types.ts';
import { isBroken } from '../sim/broken-rules.ts';

export interface PodReference {
  claim: PodClaim;
  field: 'podName' | 'sourcePod';
}

export class ClaimIndex {
  private readonly byPod = new Map<string, PodReference[]>();

  constructor(claims: PodClaim[], opts: { includeDeleting?: boolean } = {}) {
    for (const c of claims) {
      if (c.metadata.deletionTimestamp && !opts.includeDeleting) continue;
      const ns = c.metadata.namespace ?? '';
      if (c.spec.podName) this.add(ns, c.spec.podName, { claim: c, field: 'podName' });
      if (c.spec.sourcePod) this.add(ns, c.spec.sourcePod, { claim: c, field: 'sourcePod' });
    }
  }

  private add(ns: string, pod: string, ref: PodReference): void {
    const k = keyString({ namespace: ns, name: pod });
    const list = this.byPod.get(k) ?? [];
    list.push(ref);
    this.byPod.set(k, list);
  }

  /** Claims referencing this pod (normally zero or one). */
  referencing(namespace: string, pod: string): PodReference[] {
    return this.byPod.get(keyString({ namespace, name: pod })) ?? [];
  }

  /** Another claim than `self` referencing this pod, if any. */
  otherReference(namespace: string, pod: string, self: PodClaim): PodReference | undefined {
    return this.referencing(namespace, pod).find((r) => r.claim.metadata.uid !== self.metadata.uid);
  }

  isReferenced(namespace: string, pod: string): boolean {
    return this.referencing(namespace, pod).length > 0;
  }
}

/** Claims a pod event must reach (P6): by reference first, then by label as a fallback. */
export function claimsForPodEvent(
  pod: { metadata: { namespace?: string; name: string; labels?: Record<string, string> } },
  index: ClaimIndex,
  labelClaim: string | undefined,
): string[] {
  const ns = pod.metadata.namespace ?? '';
  const byReference = isBroken('P6-label-only-pod-events') ? [] : index.referencing(ns, pod.metadata.name);
  const names = new Set(byReference.map((r) => r.claim.metadata.name));
  if (labelClaim) names.add(labelClaim);
  return [...names].sort();
}
