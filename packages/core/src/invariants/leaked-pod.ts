// P7 (no leaked pod), checked once the controllers are quiet: every Bound/Draining pool pod is
// referenced by a live claim (a released pod is Idle or gone), and no claim migrates from the pod
// it is bound to (sourcePod == podName is repaired by clearing sourcePod, never by releasing).
// Not a safety check: a bind labels the pod before the claim records it, so a Bound pod is
// briefly unreferenced in every healthy run.
import { LABEL_POOL } from '../api/constants.ts';
import { keyString } from '../api/meta.ts';
import { isDeleting } from '../capture/liveness.ts';
import { stateOf } from '../pool/pods.ts';
import type { ClusterState, InvariantId, Violation } from './check.ts';

/** Violations of the invariants DESIGN.md lists beyond check.ts's InvariantId (P7). */
export type ExtendedViolation = Omit<Violation, 'invariant'> & { invariant: InvariantId | 'P7' };

const nsOf = (o: { metadata: { namespace?: string } }) => o.metadata.namespace ?? '';

export function checkNoLeakedPod(s: ClusterState): ExtendedViolation[] {
  const out: ExtendedViolation[] = [];
  const referenced = new Set<string>();
  for (const c of s.claims) {
    const id = `PodClaim/${keyString({ namespace: nsOf(c), name: c.metadata.name })}`;
    if (c.spec.sourcePod && c.spec.sourcePod === c.spec.podName) {
      out.push({
        invariant: 'P7',
        message: `claim migrates from the pod it is bound to (sourcePod == podName == ${c.spec.podName})`,
        objects: [id],
      });
    }
    if (c.metadata.deletionTimestamp) continue;
    for (const name of [c.spec.podName, c.spec.sourcePod]) {
      if (name) referenced.add(keyString({ namespace: nsOf(c), name }));
    }
  }
  for (const p of s.pods) {
    const state = stateOf(p);
    if (!p.metadata.labels?.[LABEL_POOL] || isDeleting(p) || (state !== 'Bound' && state !== 'Draining'))
      continue;
    const k = keyString({ namespace: nsOf(p), name: p.metadata.name });
    if (!referenced.has(k)) {
      out.push({
        invariant: 'P7',
        message: `pool pod is ${state} but no live claim references it (leaked)`,
        objects: [`Pod/${k}`],
      });
    }
  }
  return out;
}
