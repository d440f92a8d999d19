// The old generation's growth cap, applied by the process itself. The image runs Node with
// --heap-growing-percent=30 (Dockerfile); the npm package's bin runs under whatever `node` the user
// has, where V8 sizes the heap from the machine and lets the old generation grow up to four times
// between full collections (warming 37,000 pods peaked at 500-650 MB RSS over ~200 MB of live heap).
// V8 reads this flag at every full collection, so setting it at start works as the command line's
// does; the young generation's size (--max-semi-space-size) is fixed when the heap is made and can
// only come from the command line or NODE_OPTIONS.
import { setFlagsFromString } from 'node:v8';

/** The growth cap the image passes, in percent over what the last full collection kept. */
export const HEAP_GROWING_PERCENT = 30;

/**
 * The V8 flags to set at start: the growth cap, unless the user chose one on the command line or in
 * NODE_OPTIONS (theirs wins).
 */
export function heapFlagsToSet(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const chosen = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) =>
    /^--(heap-growing-percent|heap_growing_percent)(=|$)/.test(a),
  );
  return chosen ? [] : [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`];
}

/** Sets heapFlagsToSet(...) on this process; returns what it set. */
export function applyHeapFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): string[] {
  const flags = heapFlagsToSet(execArgv, nodeOptions);
  for (const f of flags) setFlagsFromString(f);
  return flags;
}
