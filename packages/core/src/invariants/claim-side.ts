// Checkers for the claim side of pools (issue 12), over the same plain data as check.ts:
// M1 no podMetadata residue — a released (Idle) pod carries no record of claim-added keys;
// M2 disruption hints follow the state — an Idle pod never carries do-not-disrupt or
//    safe-to-evict=false, and (once quiet) a Bound or Draining pod carries both;
// (L1, lostPolicy Fail — a claim Lost under Fail never gets a pod again — is a transition: the
// tracker checks it on every controller write, tracker.ts.)
// M1 and M2's Idle half hold after every write; M2's Bound half once the controllers are quiet.

import { ANNOTATION_DO_NOT_DISRUPT, ANNOTATION_SAFE_TO_EVICT } from '../api/constants.ts';
import { keyString } from '../api/meta.ts';
import type { Pod } from '../api/types.ts';
import { recordedPodMetadataKeys } from '../pool/pod-metadata.ts';
import { claimedBy, poolOf, stateOf } from '../pool/pods.ts';
import type { ClusterState, Violation } from './check.ts';

const podId = (p: Pod) =>
  `Pod/${keyString({ namespace: p.metadata.namespace ?? '', name: p.metadata.name })}`;

/** M1 and M2 (Idle): hold after every write. */
export function checkClaimSide(s: ClusterState): Violation[] {
  const out: Violation[] = [];
  for (const p of s.pods) {
    if (!poolOf(p) || p.metadata.deletionTimestamp) continue;
    if (stateOf(p) !== 'Idle' || claimedBy(p) !== undefined) continue;
    const left = recordedPodMetadataKeys(p);
    if (left.length > 0) {
      out.push({
        invariant: 'M1',
        message: `Idle pod still carries keys a claim's podMetadata set: ${left.join(', ')}`,
        objects: [podId(p)],
      });
    }
    const a = p.metadata.annotations ?? {};
    if (a[ANNOTATION_DO_NOT_DISRUPT] !== undefined || a[ANNOTATION_SAFE_TO_EVICT] !== undefined) {
      out.push({
        invariant: 'M2',
        message: "Idle pod carries a Bound pod's disruption hint (do-not-disrupt or safe-to-evict)",
        objects: [podId(p)],
      });
    }
  }
  return out;
}

/** M2 (Bound half): once quiet, every Bound or Draining pool pod carries both hints. */
export function checkHeldPodHints(s: ClusterState): Violation[] {
  const out: Violation[] = [];
  for (const p of s.pods) {
    const state = stateOf(p);
    if (!poolOf(p) || p.metadata.deletionTimestamp || (state !== 'Bound' && state !== 'Draining')) continue;
    const a = p.metadata.annotations ?? {};
    if (a[ANNOTATION_DO_NOT_DISRUPT] !== 'true' || a[ANNOTATION_SAFE_TO_EVICT] !== 'false') {
      out.push({
        invariant: 'M2',
        message: `${state} pod lacks ${ANNOTATION_DO_NOT_DISRUPT}=true / ${ANNOTATION_SAFE_TO_EVICT}=false`,
        objects: [podId(p)],
      });
    }
  }
  return out;
}
