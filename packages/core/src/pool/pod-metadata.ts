// A claim's spec.podMetadata on its pod: applied in the bind's own CAS write, undone exactly by the
// release write. The pod records what the claim changed in one annotation — for every key the
// claim set, the value the pod had before (null: the key was absent) — so a release restores the
// template's own labels, removes only what the claim added, and needs neither the claim (it may be
// gone) nor its current podMetadata (it may have changed since the bind).

import { HINT_ANNOTATIONS } from '../api/constants.ts';
import type { Pod, PodClaim } from '../api/types.ts';

export const ANNOTATION_POD_METADATA_KEYS = 'claimkit.dev/pod-metadata-keys';

/** The undo record: per key, the value before the claim set it (null = absent). */
export interface PodMetadataRecord {
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
}

/** A merge patch of a pod's labels and annotations. */
export interface MetadataPatch {
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
}

/**
 * Keys podMetadata may not set: claimkit's own (`claimkit.dev/*`) and the
 * disruption hints the controller owns. The CRD's CEL rule (schema/pod-claim.ts) and the webhook
 * refuse them; this filter keeps a claim admitted without those layers from setting them anyway.
 */
export function isReservedPodMetadataKey(key: string, kind: 'labels' | 'annotations'): boolean {
  if (key.startsWith('claimkit.dev/')) return true;
  return kind === 'annotations' && (HINT_ANNOTATIONS as readonly string[]).includes(key);
}

/** The record on a pod; an absent or unreadable record restores nothing. */
export function readPodMetadataRecord(pod: Pod): PodMetadataRecord {
  const raw = pod.metadata.annotations?.[ANNOTATION_POD_METADATA_KEYS];
  const empty: PodMetadataRecord = { labels: {}, annotations: {} };
  if (!raw) return empty;
  try {
    const parsed = JSON.parse(raw) as Partial<PodMetadataRecord>;
    return {
      labels: cleanRecord(parsed.labels, 'labels'),
      annotations: cleanRecord(parsed.annotations, 'annotations'),
    };
  } catch {
    return empty;
  }
}

/** A tampered record never makes a release touch claimkit's own keys or the hints. */
function cleanRecord(x: unknown, kind: 'labels' | 'annotations'): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return out;
  for (const [k, v] of Object.entries(x)) {
    if (isReservedPodMetadataKey(k, kind)) continue;
    if (typeof v === 'string' || v === null) out[k] = v;
  }
  return out;
}

/**
 * The labels and annotations a bind (or a re-label of our own pod) writes for the claim's
 * podMetadata, and the record they leave. Keys recorded by an earlier write for this claim keep
 * their original "before" value; keys the claim no longer asks for are restored now.
 */
export function podMetadataBindPatch(pod: Pod, claim: PodClaim): MetadataPatch {
  const prev = readPodMetadataRecord(pod);
  const record: PodMetadataRecord = { labels: {}, annotations: {} };
  const patch: MetadataPatch = { labels: {}, annotations: {} };
  for (const kind of ['labels', 'annotations'] as const) {
    const want = claim.spec.podMetadata?.[kind] ?? {};
    const current = pod.metadata[kind] ?? {};
    for (const [k, v] of Object.entries(want)) {
      if (isReservedPodMetadataKey(k, kind)) continue;
      record[kind][k] = Object.hasOwn(prev[kind], k) ? prev[kind][k]! : (current[k] ?? null);
      patch[kind][k] = v;
    }
    for (const [k, before] of Object.entries(prev[kind])) {
      if (!Object.hasOwn(record[kind], k)) patch[kind][k] = before;
    }
  }
  const recorded = Object.keys(record.labels).length + Object.keys(record.annotations).length > 0;
  patch.annotations[ANNOTATION_POD_METADATA_KEYS] = recorded ? stableJson(record) : null;
  return patch;
}

/** What a release writes: every recorded key back to its value before the claim, and no record. */
export function podMetadataReleasePatch(pod: Pod): MetadataPatch {
  const record = readPodMetadataRecord(pod);
  return {
    labels: { ...record.labels },
    annotations: { ...record.annotations, [ANNOTATION_POD_METADATA_KEYS]: null },
  };
}

/** Keys of `pod` that a claim's podMetadata set and a release did not undo (for the checkers). */
export function recordedPodMetadataKeys(pod: Pod): string[] {
  const r = readPodMetadataRecord(pod);
  return [
    ...Object.keys(r.labels).map((k) => `label ${k}`),
    ...Object.keys(r.annotations).map((k) => `annotation ${k}`),
  ];
}

function stableJson(r: PodMetadataRecord): string {
  const sorted = (m: Record<string, string | null>) =>
    Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({ labels: sorted(r.labels), annotations: sorted(r.annotations) });
}
