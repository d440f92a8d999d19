// The status-only predicate (controller-runtime's predicates, named): an update that changed nothing
// but status. A pool's own status-only change (mostly the echo of its own status write) is treated as
// derived, so it is coalesced: reconciling at once on it made every status write cause the next one.
import { deepEqual } from '../api/json.ts';
import type { KeyStep } from './routed-key.ts';

/** True when an update changed nothing but status (and the version stamps the server keeps). */
export function isStatusOnlyChange(
  before: { metadata: object; status?: unknown } | undefined,
  after: { metadata: object; status?: unknown } | undefined,
): boolean {
  if (before === undefined || after === undefined) return false;
  const rest = (o: { metadata: object; status?: unknown }) => ({
    ...o,
    status: undefined,
    metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined },
  });
  return deepEqual(rest(before), rest(after));
}

/** A PodPool's own key, on a status-only change of the pool, becomes a derived (coalesced) key. */
export const statusOnlyChange: KeyStep = (event, key) =>
  key.own && event.kind === 'PodPool' && isStatusOnlyChange(event.before, event.after)
    ? { ...key, own: false }
    : key;
