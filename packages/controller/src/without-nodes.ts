// The cache of a controller started with --no-watch-nodes: Nodes are never read, so no cluster-wide
// permission is needed, and core's serving check counts a node it does not know as serving.
import { ApiError, type OldestFirstReader, type Reader } from '@claimkit/core';

/**
 * The cache for a controller that does not watch Nodes (`--no-watch-nodes`): every Node is unknown
 * (NotFound), never read live, so no cluster-wide permission is needed.
 */
export function withoutNodes(cache: Reader & OldestFirstReader): Reader & OldestFirstReader {
  return {
    // Forwarded, or a claim's gather would fall back to reading its whole pool (api/oldest-first.ts).
    listOldestFirst: (kind, opts) =>
      kind === 'Node' ? Promise.resolve({ items: [] }) : cache.listOldestFirst(kind, opts),
    get: (kind, key) =>
      kind === 'Node'
        ? Promise.reject(new ApiError('NotFound', `nodes "${key.name}" not watched (--no-watch-nodes)`))
        : cache.get(kind, key),
    list: (kind, opts) =>
      kind === 'Node' ? Promise.resolve({ items: [], resourceVersion: '' }) : cache.list(kind, opts),
  };
}
