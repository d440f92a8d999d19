// Which pod a claim bound: the binding records the pod's UID (status.podUID; an earlier release's
// claims, the claimkit.dev/pod-uid annotation), so a pod deleted and created again under the same
// name (kubectl replace --force, a person's delete + create) is not taken for the claim's own,
// whatever labels it was given.
import { bindingOf } from '../api/claim-binding.ts';
import type { Pod, PodClaim } from '../api/types.ts';

/** The UID of the pod the claim is bound to, when the binding recorded it. */
export function boundPodUid(c: PodClaim): string | undefined {
  return bindingOf(c).podUID;
}

/** `pod` carries the claim's podName but is not the pod the claim bound under it (another UID). */
export function isReplacement(c: PodClaim, pod: Pod): boolean {
  const b = bindingOf(c);
  if (pod.metadata.name !== b.podName || !pod.metadata.uid) return false;
  return b.podUID !== undefined && pod.metadata.uid !== b.podUID;
}
