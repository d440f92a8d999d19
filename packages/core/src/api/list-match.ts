// Which objects a list or watch with these options returns: namespace, label selector and field
// selector (field values compared as strings, a missing field as ''), as the API server filters.
import { getPath } from './json.ts';
import { matchesSelector } from './labels.ts';
import type { KubeObject } from './meta.ts';
import type { ListOptions } from './ports.ts';

export function matchesList(o: KubeObject, opts: ListOptions): boolean {
  if (opts.namespace && (o.metadata.namespace ?? '') !== opts.namespace) return false;
  if (opts.labelSelector !== undefined && !matchesSelector(o.metadata.labels, opts.labelSelector))
    return false;
  for (const [path, want] of Object.entries(opts.fieldSelector ?? {})) {
    const got = getPath(o, path);
    if ((got === undefined || got === null ? '' : String(got)) !== want) return false;
  }
  return true;
}
