// Which pod should hold a capture next: Ready, not deleting, matching the selector; a stable order
// (oldest first, then name) so replicas deciding from the same snapshot agree.
import { matchesSelector } from '../api/labels.ts';
import { parseTimestamp } from '../api/meta.ts';
import type { Capture, Pod } from '../api/types.ts';
import { isDeleting, isPodReady } from './liveness.ts';

export function captureCandidates(
  capture: Capture,
  pods: Pod[],
  exclude?: { name: string; uid: string },
): Pod[] {
  return pods
    .filter(
      (p) =>
        (p.metadata.namespace ?? '') === (capture.metadata.namespace ?? '') &&
        matchesSelector(p.metadata.labels, capture.spec.selector) &&
        isPodReady(p) &&
        !isDeleting(p) &&
        !(exclude && (p.metadata.name === exclude.name || p.metadata.uid === exclude.uid)),
    )
    .sort(byCreationThenName);
}

export function byCreationThenName(a: Pod, b: Pod): number {
  const ta = parseTimestamp(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTimestamp(b.metadata.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}
