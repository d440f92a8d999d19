// Which claims a claim set deletes on scale-in (P4): never a migrating claim; Pending first, then
// Lost, then the newest Bound.
import { podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { ANNOTATION_MIGRATE } from '../api/constants.ts';
import { parseTimestamp } from '../api/meta.ts';
import type { PodClaim } from '../api/types.ts';

export function isMigrating(c: PodClaim): boolean {
  return (
    Boolean(sourcePodOf(c)) ||
    c.status?.phase === 'Migrating' ||
    c.metadata.annotations?.[ANNOTATION_MIGRATE] !== undefined
  );
}

function rank(c: PodClaim): number {
  if (!podNameOf(c)) return c.status?.phase === 'Lost' ? 1 : 0;
  if (c.status?.phase === 'Lost') return 1;
  return 2;
}

/** Up to `count` claims to delete, in deletion order, and how many could not be chosen. */
export function chooseScaleIn(claims: PodClaim[], count: number): ScaleInChoice {
  return takeForScaleIn(
    claims.filter((c) => !c.metadata.deletionTimestamp && !isMigrating(c)),
    count,
  );
}

export interface ScaleInChoice {
  victims: PodClaim[];
  /** How many of the claims asked for could not be chosen. */
  blocked: number;
}

/** Up to `count` of `eligible`, in deletion order: Pending, then Lost, then the newest Bound. */
export function takeForScaleIn(eligible: readonly PodClaim[], count: number): ScaleInChoice {
  if (count <= 0) return { victims: [], blocked: 0 };
  const ordered = [...eligible].sort((a, b) => {
    const r = rank(a) - rank(b);
    if (r !== 0) return r;
    // Newest first within a rank.
    const ta = parseTimestamp(a.metadata.creationTimestamp) ?? 0;
    const tb = parseTimestamp(b.metadata.creationTimestamp) ?? 0;
    if (ta !== tb) return tb - ta;
    return a.metadata.name < b.metadata.name ? 1 : a.metadata.name > b.metadata.name ? -1 : 0;
  });
  const victims = ordered.slice(0, count);
  return { victims, blocked: count - victims.length };
}
