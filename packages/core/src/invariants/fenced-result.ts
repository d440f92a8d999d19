// C1 on a snapshot: a Capture's result carries the token of the claim that produced it (see
// capture/result-fence.ts for when a standing result is fenced). The tracker sees the write itself;
// this sees what got in anyway (admission off, a legacy writer) for as long as it stands.
import { keyString } from '../api/meta.ts';
import { unfencedResult } from '../capture/result-fence.ts';
import type { ClusterState, Violation } from './check.ts';

export function checkFencedResults(s: ClusterState): Violation[] {
  const out: Violation[] = [];
  for (const c of s.captures) {
    const why = c.metadata.deletionTimestamp ? undefined : unfencedResult(c.status ?? {});
    if (why === undefined) continue;
    out.push({
      invariant: 'C1',
      message: `unfenced result: ${why}`,
      objects: [`Capture/${keyString({ namespace: c.metadata.namespace ?? '', name: c.metadata.name })}`],
    });
  }
  return out;
}
