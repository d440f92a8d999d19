// Where a claim's binding is read. The controller records it in status (podName, nodeName, podUID,
// sourcePod) with the phase, in one status write (DESIGN.md "PodClaim": a bind is two writes).
// Claims stored by an earlier release keep it in spec, with the pod's UID in the claimkit.dev/pod-uid
// annotation, until the controller moves it (reconcile/podclaim/legacy-binding.ts): a claim whose
// status records no binding is read from there. The move writes status first and clears spec after,
// and nothing else changes a claim's binding while spec still holds one, so the two never disagree.
import { ANNOTATION_POD_UID } from './constants.ts';

export interface ClaimBinding {
  podName?: string;
  nodeName?: string;
  podUID?: string;
  sourcePod?: string;
}

/** The part of a claim its binding is read from (the webhook's index parses no more than this). */
export interface BindingSource {
  metadata: { annotations?: Record<string, string> };
  spec?: { podName?: string; nodeName?: string; sourcePod?: string };
  status?: {
    podName?: string | null;
    nodeName?: string | null;
    podUID?: string | null;
    sourcePod?: string | null;
  };
}

const set = (v: string | null | undefined): string | undefined => (v ? v : undefined);

/** The binding fields, as a plain object without empty ones. */
function compact(b: ClaimBinding): ClaimBinding {
  const out: ClaimBinding = {};
  if (b.podName) out.podName = b.podName;
  if (b.nodeName) out.nodeName = b.nodeName;
  if (b.podUID) out.podUID = b.podUID;
  if (b.sourcePod) out.sourcePod = b.sourcePod;
  return out;
}

/** The binding status records (empty when it records none). */
export function statusBinding(c: BindingSource): ClaimBinding {
  const s = c.status;
  if (!s) return {};
  return compact({
    podName: set(s.podName),
    nodeName: set(s.nodeName),
    podUID: set(s.podUID),
    sourcePod: set(s.sourcePod),
  });
}

/** `<pod name>/<pod UID>` from the legacy annotation, when it names `podName`. */
function legacyPodUid(c: BindingSource, podName: string | undefined): string | undefined {
  const record = c.metadata.annotations?.[ANNOTATION_POD_UID];
  if (!record || !podName) return undefined;
  const slash = record.indexOf('/');
  return slash > 0 && record.slice(0, slash) === podName ? record.slice(slash + 1) || undefined : undefined;
}

/** The binding an earlier release recorded in spec (and the pod-uid annotation), if any. */
export function legacyBinding(c: BindingSource): ClaimBinding {
  const podName = set(c.spec?.podName);
  return compact({
    podName,
    nodeName: set(c.spec?.nodeName),
    podUID: legacyPodUid(c, podName),
    sourcePod: set(c.spec?.sourcePod),
  });
}

/** Whether spec (or the pod-uid annotation) still holds anything of a legacy binding. */
export function hasLegacyBinding(c: BindingSource): boolean {
  return (
    Boolean(c.spec?.podName || c.spec?.nodeName || c.spec?.sourcePod) ||
    c.metadata.annotations?.[ANNOTATION_POD_UID] !== undefined
  );
}

/** The claim's binding: status, or the legacy spec when status records none. */
export function bindingOf(c: BindingSource): ClaimBinding {
  const fromStatus = statusBinding(c);
  if (fromStatus.podName || fromStatus.sourcePod || fromStatus.nodeName || fromStatus.podUID)
    return fromStatus;
  return legacyBinding(c);
}

/** The pod the claim is bound to. */
export const podNameOf = (c: BindingSource): string | undefined => bindingOf(c).podName;
/** The node of the pod the claim is bound to. */
export const nodeNameOf = (c: BindingSource): string | undefined => bindingOf(c).nodeName;
/** During a migration: the pod being left. */
export const sourcePodOf = (c: BindingSource): string | undefined => bindingOf(c).sourcePod;

/** Whether the claim references `pod` (as its pod or a migration's source). */
export function referencesPod(c: BindingSource, pod: string): boolean {
  const b = bindingOf(c);
  return b.podName === pod || b.sourcePod === pod;
}

/**
 * The cache index fields a claim's references are found by: status, and spec for legacy claims
 * (each claim is indexed under whichever it records).
 */
export const REFERENCE_INDEX_FIELDS = [
  'status.podName',
  'status.sourcePod',
  'spec.podName',
  'spec.sourcePod',
] as const;

/**
 * A status merge patch that records `b` as the whole binding (null removes a field it had), to go in
 * one CAS status write with the phase.
 */
export function bindingPatch(
  b: ClaimBinding,
): Record<'podName' | 'nodeName' | 'podUID' | 'sourcePod', string | null> {
  return {
    podName: b.podName ?? null,
    nodeName: b.nodeName ?? null,
    podUID: b.podUID ?? null,
    sourcePod: b.sourcePod ?? null,
  };
}
