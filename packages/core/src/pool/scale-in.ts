// Which claims a claim set deletes on scale-in (P4): never a migrating claim; Pending first, then
// Lost, then the newest Bound.
import { ANNOTATION_MIGRATE } from '../api/constants.ts';
import { parseTimestamp } from '../api/meta.ts';
import type { PodClaim } from '../api/types.ts';
import { isBroken } from '../sim/broken-rules.ts';

export function isMigrating(c: PodClaim): boolean {
  return (
    Boolean(c.spec.sourcePod) ||
    c.status?.phase === 'Migrating' ||
    c.metadata.annotations?.[ANNOTATION_MIGRATE] !== undefined
  );
}

function rank(c: PodClaim): number {
  if (!c.spec.podName) return c.status?.phase === 'Lost' ? 1 : 0;
  if (c.status?.phase === 'Lost') return 1;
  return 2;
}

/** Up to `count` claims to delete, in deletion order, and how many could not be chosen. */
export function chooseScaleIn(claims: PodClaim[], count: number): { victims: PodClaim[]; blocked: number } {
  if (count <= 0) return { victims: [], blocked: 0 };
  const eligible = claims.filter(
    (c) => !c.metadata.deletionTimestamp && (isBroken('P4-scale-in-picks-migrating') || !isMigrating(c)),
  );
  eligible.sort((a, b) => {
    const r = rank(a) - rank(b);
    if (r !== 0) return r;
    // Newest first within a rank.
    const ta = parseTimestamp(a.metadata.creationTimestamp) ?? 0;
    const tb = parseTimestamp(b.metadata.creationTimestamp) ?? 0;
    if (ta !== tb) return tb - ta;
    return a.metadata.name < b.metadata.name ? 1 : a.metadata.name > b.metadata.name ? -1 : 0;
  });
  const victims = eligible.slice(0, count);
  return { victims, blocked: count - victims.length };
}
