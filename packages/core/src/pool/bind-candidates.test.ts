import { describe, expect, it } from 'vitest';
import type { Pod } from '../api/types.ts';
import { Rng } from '../model/clock.ts';
import {
  boundTo,
  createdAt,
  deleting,
  idle,
  inNamespace,
  inPool,
  pod,
  podClaim,
  ready,
  withState,
} from '../testing/fixtures.ts';
import { bindCandidates, CANDIDATE_WINDOW, oldestBindCandidates } from './bind-candidates.ts';
import { ClaimIndex } from './claim-index.ts';

const names = (ps: Pod[]) => ps.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);

describe('oldestBindCandidates', () => {
  it('is the first `limit` of bindCandidates, ties in time and name included, for random pools', () => {
    const rng = new Rng(12);
    for (let round = 0; round < 60; round++) {
      const n = rng.int(400);
      const pods: Pod[] = [];
      for (let i = 0; i < n; i++) {
        const mods = [
          inNamespace(rng.chance(0.8) ? 'a' : 'b'),
          inPool(rng.chance(0.9) ? 'warm' : 'other'),
          createdAt(rng.int(20)), // many pods per second, as a pool warmed in bulk has
          rng.chance(0.9) ? idle() : withState('Bound'),
          ...(rng.chance(0.9) ? [ready()] : []),
          ...(rng.chance(0.05) ? [deleting()] : []),
        ];
        // Names repeat across namespaces, so (time, name) ties fall back to input order.
        pods.push(pod(`p${rng.int(n + 1)}`, ...mods));
      }
      const claims = pods
        .filter(() => rng.chance(0.05))
        .map((p, i) => podClaim(`c${i}`, inNamespace(p.metadata.namespace!), boundTo(p.metadata.name, 'n1')));
      const index = new ClaimIndex(claims);
      const all = bindCandidates('warm', pods, index);
      for (const limit of [0, 1, 7, CANDIDATE_WINDOW, n + 1]) {
        expect(
          names(oldestBindCandidates('warm', pods, index, limit)),
          `round ${round} limit ${limit}`,
        ).toEqual(names(all.slice(0, limit)));
      }
    }
  });

  it('keeps the oldest when the input comes newest first', () => {
    const pods = Array.from({ length: 300 }, (_, i) =>
      pod(`p${i}`, inPool('warm'), idle(), ready(), createdAt(300 - i)),
    );
    expect(names(oldestBindCandidates('warm', pods, new ClaimIndex([]), 3))).toEqual([
      'default/p299',
      'default/p298',
      'default/p297',
    ]);
  });
});
