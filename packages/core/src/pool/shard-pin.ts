// A PodPool's shard pin (annotation claimkit.dev/shard): which controller shard reconciles the pool and
// its claims (loop/shard.ts), in place of the hash of its name. Read by the controller's routing and
// judged by the webhook (admission/sets-pools.ts), so it lives below both.
import { ANNOTATION_SHARD } from '../api/constants.ts';

/** The most shards `--shard` accepts (a pool per shard is already the finest useful split). */
export const MAX_SHARDS = 256;

/** What problem a claimkit.dev/shard value has (the webhook refuses it), or undefined when none. */
export function shardPinProblem(value: string): string | undefined {
  return /^(0|[1-9]\d{0,2})$/.test(value) && Number(value) < MAX_SHARDS
    ? undefined
    : `want a shard index from 0 to ${MAX_SHARDS - 1} (taken modulo the number of shards), got ${JSON.stringify(value)}`;
}

/**
 * The shard a pool's annotation pins it to, or undefined: none, or a malformed value (the controller
 * then hashes the name, as without the annotation; the webhook refuses such a value).
 */
export function shardPin(
  pool: { metadata: { annotations?: Record<string, string> } } | undefined,
): number | undefined {
  const v = pool?.metadata.annotations?.[ANNOTATION_SHARD];
  return v === undefined || shardPinProblem(v) !== undefined ? undefined : Number(v);
}
