// P7 on a snapshot taken when the controllers are quiet: no claim migrates from the pod it is
// bound to. sourcePod == podName (a writer without the CRD's rule) is repaired by clearing
// sourcePod, never by releasing the pod; until then the claim would drain and release its own pod.
import { podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { keyString } from '../api/meta.ts';
import type { ClusterState, Violation } from './check.ts';

export function checkSelfMigrations(s: ClusterState): Violation[] {
  const out: Violation[] = [];
  for (const c of s.claims) {
    if (!sourcePodOf(c) || sourcePodOf(c) !== podNameOf(c)) continue;
    out.push({
      invariant: 'P7',
      message: `claim migrates from the pod it is bound to (sourcePod == podName == ${podNameOf(c)})`,
      objects: [`PodClaim/${keyString({ namespace: c.metadata.namespace ?? '', name: c.metadata.name })}`],
    });
  }
  return out;
}
