// The event → queue layer broken on purpose, for tests that prove the simulator catches each bug.
// They pass these as SimOptions (statusOnlyChange, coalesce, ownWritesTtlMs); production code never
// imports this file.
import type { AnyObject } from '../api/types.ts';
import { coalesceDerivedPoolKeys } from '../loop/coalesce.ts';
import type { KeyStep } from '../loop/routed-key.ts';

/**
 * Coalescing that drops a key: a derived PodPool key is dropped instead of delayed, as if the
 * coalescer forgot to queue the burst it absorbed, so a pool hears of no pod's or claim's change.
 */
const coalescingDropsPoolKeys: KeyStep = (event, key, settings) =>
  !key.own && key.key.startsWith('PodPool|') ? undefined : coalesceDerivedPoolKeys(event, key, settings);

/**
 * A status-only filter that swallows a spec change: it compares labels and annotations only (as if
 * nothing else but status could change), takes every other pool update for status-only, and
 * filters it out instead of coalescing it.
 */
const statusFilterSwallowsSpec: KeyStep = (event, key) => {
  const { before, after } = event;
  if (!key.own || event.kind !== 'PodPool' || !before || !after) return key;
  return sameLabelsAndAnnotations(before, after) ? undefined : key;
};

function sameLabelsAndAnnotations(a: AnyObject, b: AnyObject): boolean {
  const s = (o: AnyObject) => JSON.stringify([o.metadata.labels ?? {}, o.metadata.annotations ?? {}]);
  return s(a) === s(b);
}

/** An own-writes skip that never expires (SimOptions.ownWritesTtlMs). */
const OWN_WRITES_NEVER_EXPIRE = Number.POSITIVE_INFINITY;

export const BROKEN_LOOP = {
  'coalescing-drops-pool-keys': { coalesce: coalescingDropsPoolKeys },
  'status-filter-swallows-spec': { statusOnlyChange: statusFilterSwallowsSpec },
  'own-writes-never-expire': { ownWritesTtlMs: OWN_WRITES_NEVER_EXPIRE },
} as const;
