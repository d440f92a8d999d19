// C1 on a snapshot: a Capture's result carries the token of the claim that produced it. The
// completing write closes that claim and nothing acquires a Captured capture, so a fenced result
// has token == epoch >= 1 and no claim open beside it. The tracker sees the write itself; this
// sees what got in anyway (admission off, a legacy writer) for as long as it stays.
import { keyString } from '../api/meta.ts';
import type { ClusterState, Violation } from './check.ts';

export function checkFencedResults(s: ClusterState): Violation[] {
  const out: Violation[] = [];
  for (const c of s.captures) {
    const st = c.status ?? {};
    if (!st.result || c.metadata.deletionTimestamp) continue;
    const epoch = st.epoch ?? 0;
    const why =
      st.result.token < 1 || st.result.token !== epoch
        ? `result token ${st.result.token} is not the last issued token (epoch ${epoch})`
        : st.claim
          ? `result token ${st.result.token} sits beside an open claim (token ${st.claim.token})`
          : undefined;
    if (why) {
      out.push({
        invariant: 'C1',
        message: `unfenced result: ${why}`,
        objects: [`Capture/${keyString({ namespace: c.metadata.namespace ?? '', name: c.metadata.name })}`],
      });
    }
  }
  return out;
}
