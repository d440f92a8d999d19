// Pod predicates every layer asks (pool, capture, reconcile, invariants, doctor, sim): plain facts
// about one pod's phase, readiness and deletion, with no claim or pool meaning of their own.
import type { Pod } from './types.ts';

export function isPodReady(pod: Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/**
 * The pod's containers have all finished for good (phase Succeeded or Failed: restartPolicy Never,
 * OnFailure after an exit 0, an OOM kill under Never). It never runs again: as good as gone to a
 * claim, and never worth recycling. A container restarted in place (restartPolicy Always) keeps its
 * pod Running: not finished.
 */
export function isPodFinished(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

export function isDeleting(o: { metadata: { deletionTimestamp?: string } }): boolean {
  return Boolean(o.metadata.deletionTimestamp);
}
