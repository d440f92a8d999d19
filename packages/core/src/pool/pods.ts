// Pool pod labels and the writes that change them. Every pod write carries the pod's
// resourceVersion (compare-and-swap), so two writers can never both win a pod.
import {
  ANNOTATION_CLAIMED_BY_UID,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type PodState,
} from '../api/constants.ts';
import type { Write } from '../api/decision.ts';
import { keyOf, type OwnerReference } from '../api/meta.ts';
import { isDeleting, isPodFinished, isPodReady } from '../api/pod-predicates.ts';
import type { Pod, PodClaim, PodPool, ReleasePolicy } from '../api/types.ts';
import { heldPodHints, idlePodHints } from './disruption-hints.ts';
import { podMetadataBindPatch, podMetadataReleasePatch } from './pod-metadata.ts';
import { type PodRelease, releasePolicyFor } from './template-hash.ts';

export const ANNOTATION_DRAINING_SINCE = 'claimkit.dev/draining-since';

export const poolOf = (p: Pod): string | undefined => p.metadata.labels?.[LABEL_POOL];
export const stateOf = (p: Pod): string | undefined => p.metadata.labels?.[LABEL_STATE];
export const claimedBy = (p: Pod): string | undefined => p.metadata.labels?.[LABEL_CLAIMED_BY] || undefined;
export const claimedByUid = (p: Pod): string | undefined =>
  p.metadata.annotations?.[ANNOTATION_CLAIMED_BY_UID] || undefined;

/** Labelled as ours: name and (when recorded) UID of this claim. */
export function isClaimedBy(p: Pod, claim: PodClaim): boolean {
  if (claimedBy(p) !== claim.metadata.name) return false;
  const uid = claimedByUid(p);
  return uid === undefined || uid === claim.metadata.uid;
}

/** A pod a Pending claim may bind: Idle by label, unclaimed, Ready, not deleting. */
export function isIdleAndReady(p: Pod): boolean {
  return stateOf(p) === 'Idle' && claimedBy(p) === undefined && !isDeleting(p) && isPodReady(p);
}

/**
 * CAS: take an Idle pod for a claim. Fails with Conflict if anybody changed the pod since we read it.
 * The same write carries the claim's podMetadata (and its undo record) and the disruption hints.
 */
export function bindPodWrite(pod: Pod, claim: PodClaim, state: PodState = 'Bound'): Write {
  const extra = podMetadataBindPatch(pod, claim);
  return {
    op: 'patch',
    kind: 'Pod',
    key: keyOf(pod),
    patch: {
      metadata: {
        labels: { ...extra.labels, [LABEL_STATE]: state, [LABEL_CLAIMED_BY]: claim.metadata.name },
        annotations: {
          ...extra.annotations,
          ...heldPodHints(),
          [ANNOTATION_CLAIMED_BY_UID]: claim.metadata.uid ?? '',
          [ANNOTATION_DRAINING_SINCE]: null,
        },
      },
    },
    precondition: { resourceVersion: pod.metadata.resourceVersion!, uid: pod.metadata.uid! },
    why: `bind pod ${pod.metadata.name} to claim ${claim.metadata.name}`,
    intent: { act: 'bind', pool: poolOf(pod) ?? '' },
  };
}

/** Labels a pod we reference but that lost its claimed-by label (e.g. another claim's finalizer removed its own). */
export function labelOwnedPodWrite(pod: Pod, claim: PodClaim): Write {
  return {
    ...bindPodWrite(pod, claim, (stateOf(pod) as PodState) === 'Draining' ? 'Draining' : 'Bound'),
    why: `label pod ${pod.metadata.name} as claimed by ${claim.metadata.name}`,
    intent: { act: 'relabel', pool: poolOf(pod) ?? '' },
  };
}

/** Removes only the claimed-by label and annotation (never replaces it with another claim's name). */
export function unlabelPodWrite(pod: Pod, why: string): Write {
  return {
    op: 'patch',
    kind: 'Pod',
    key: keyOf(pod),
    patch: {
      metadata: {
        labels: { [LABEL_CLAIMED_BY]: null },
        annotations: { [ANNOTATION_CLAIMED_BY_UID]: null },
      },
    },
    precondition: { resourceVersion: pod.metadata.resourceVersion!, uid: pod.metadata.uid! },
    why,
  };
}

export function drainPodWrite(pod: Pod, now: number): Write {
  return {
    op: 'patch',
    kind: 'Pod',
    key: keyOf(pod),
    patch: {
      metadata: {
        labels: { [LABEL_STATE]: 'Draining' },
        annotations: { [ANNOTATION_DRAINING_SINCE]: new Date(now).toISOString() },
      },
    },
    precondition: { resourceVersion: pod.metadata.resourceVersion!, uid: pod.metadata.uid! },
    why: `drain pod ${pod.metadata.name}`,
  };
}

/** The pool as controlling owner of what it creates (its pods, its PodDisruptionBudget). */
export function poolOwnerReference(pool: PodPool): OwnerReference {
  return {
    apiVersion: 'claimkit.dev/v1alpha1',
    kind: 'PodPool',
    name: pool.metadata.name,
    uid: pool.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Deletes a pod only as last read (UID and resourceVersion): a concurrent bind or relabel wins. */
export function deletePodAsReadWrite(pod: Pod, why: string): Write {
  return {
    op: 'delete',
    kind: 'Pod',
    key: keyOf(pod),
    preconditions: { uid: pod.metadata.uid!, resourceVersion: pod.metadata.resourceVersion! },
    why,
  };
}

/**
 * Release per the pool's releasePolicy: Recycle returns the pod to Idle, Delete removes it; a pod of
 * an outdated template (when the release carries the pool's template hash) is deleted, not recycled,
 * and so is a finished pod (phase Succeeded or Failed: it never runs again).
 * A recycled pod loses what its claim's podMetadata set (restored from the pod's own record) and the
 * Bound pod's disruption hints, and gets an Idle pod's deletion cost.
 */
export function releasePodWrite(pod: Pod, policy: PodRelease | ReleasePolicy, why: string): Write {
  if (releasePolicyFor(pod, policy) === 'Delete' || isDeleting(pod) || isPodFinished(pod))
    return {
      ...deletePodAsReadWrite(pod, why),
      intent: { act: 'release', pool: poolOf(pod) ?? '', recycled: false },
    };
  const undo = podMetadataReleasePatch(pod);
  return {
    op: 'patch',
    kind: 'Pod',
    key: keyOf(pod),
    patch: {
      metadata: {
        labels: { ...undo.labels, [LABEL_STATE]: 'Idle', [LABEL_CLAIMED_BY]: null },
        annotations: {
          ...undo.annotations,
          ...idlePodHints(pod),
          [ANNOTATION_CLAIMED_BY_UID]: null,
          [ANNOTATION_DRAINING_SINCE]: null,
        },
      },
    },
    precondition: { resourceVersion: pod.metadata.resourceVersion!, uid: pod.metadata.uid! },
    why,
    intent: { act: 'release', pool: poolOf(pod) ?? '', recycled: true },
  };
}
