// --disable-claim-events: an EventRecorder that does not write the Normal Events about PodClaims.
// Every claim gets its own (Pending, Bound, Finalized; NoReadyPod while it waits; a migration's
// MigrationStarted and Migrated), each a different message, so the recorder's aggregation of
// repeats cannot fold them and each costs a write to the controller and to the API server.
// Warnings (Lost, a refused pool, a removed foreign label...) are still written, as is every Event
// on another kind (pools, claim sets, captures, pods): someone who turns this on still sees problems.
import type { EventRecorder, EventSpec } from '@claimkit/core';

/** Whether --disable-claim-events keeps `e` from being written (a routine Normal Event on a PodClaim). */
export const isRoutineClaimEvent = (e: EventSpec): boolean =>
  e.type === 'Normal' && e.regarding.kind === 'PodClaim';

/**
 * `inner` without the routine claim Events. The Manager puts it under its own wrapper, so what is
 * not written is still logged and counted (claimkit_events_total, migrations) as before.
 */
export function withoutClaimEvents(inner: EventRecorder): EventRecorder {
  return { record: (e) => (isRoutineClaimEvent(e) ? undefined : inner.record(e)) };
}
