// The claim spec fields a PodClaim and a PodClaimSet template share: podMetadata (maps of strings,
// no claimkit.dev/ keys, no disruption-hint annotations — the CRD's CEL rule, checked again here)
// and lostPolicy (Rebind | Fail).

import type { Violation } from '../api/admission-request.ts';
import { isReservedPodMetadataKey } from '../pool/pod-metadata.ts';
import { field, obj } from './read.ts';

const LOST_POLICIES = ['Rebind', 'Fail'];

/** Every violation of `spec` (a claim spec, or a set template's) at `base` (e.g. `spec`). */
export function claimSpecViolations(spec: unknown, base: string): Violation[] {
  const v: Violation[] = [];
  const md = field(spec, 'podMetadata');
  if (md !== undefined && md !== null) {
    if (obj(md) === undefined) v.push({ field: `${base}.podMetadata`, message: 'must be an object' });
    for (const kind of ['labels', 'annotations'] as const) {
      const raw = field(md, kind);
      if (raw === undefined || raw === null) continue;
      const path = `${base}.podMetadata.${kind}`;
      const m = obj(raw);
      if (m === undefined) {
        v.push({ field: path, message: 'must be a map of strings' });
        continue;
      }
      for (const [k, x] of Object.entries(m)) {
        if (typeof x !== 'string') v.push({ field: `${path}[${k}]`, message: 'must be a string' });
        if (isReservedPodMetadataKey(k, kind)) {
          v.push({
            field: `${path}[${k}]`,
            message: k.startsWith('claimkit.dev/')
              ? `podMetadata may not set claimkit.dev/ ${kind}: the controller owns them`
              : 'podMetadata may not set a disruption hint: the controller sets it by pod state',
          });
        }
      }
    }
  }
  const lostPolicy = field(spec, 'lostPolicy');
  if (lostPolicy !== undefined && lostPolicy !== null && !LOST_POLICIES.includes(lostPolicy as string)) {
    v.push({ field: `${base}.lostPolicy`, message: `must be one of ${LOST_POLICIES.join(', ')}` });
  }
  return v;
}
