// Which pod a claim bound: the bind (and a migration's start) records `<pod name>/<pod UID>` on the
// claim, so a pod deleted and created again under the same name (kubectl replace --force, a
// person's delete + create) is not taken for the claim's own, whatever labels it was given. The
// name is part of the record: a podName that someone else wrote since leaves a record about another
// pod, which then says nothing (the reference is judged as before).
import { ANNOTATION_POD_UID } from '../api/constants.ts';
import type { Pod, PodClaim } from '../api/types.ts';

/** The annotation value recording `pod` as the claim's bound pod. */
export const boundPodRecord = (pod: Pod): string | undefined =>
  pod.metadata.uid ? `${pod.metadata.name}/${pod.metadata.uid}` : undefined;

/** The UID of the pod named `podName` that the claim bound, when the bind recorded it. */
export function boundPodUid(c: PodClaim, podName = c.spec.podName): string | undefined {
  const record = c.metadata.annotations?.[ANNOTATION_POD_UID];
  if (!record || !podName) return undefined;
  const slash = record.indexOf('/');
  return slash > 0 && record.slice(0, slash) === podName ? record.slice(slash + 1) || undefined : undefined;
}

/** `pod` carries the claim's podName but is not the pod the claim bound under it (another UID). */
export function isReplacement(c: PodClaim, pod: Pod): boolean {
  if (pod.metadata.name !== c.spec.podName || !pod.metadata.uid) return false;
  const bound = boundPodUid(c);
  return bound !== undefined && pod.metadata.uid !== bound;
}
