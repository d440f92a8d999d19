// Invariant P1 at the pod, stated once in TypeScript: a pod is never handed from one claim to
// another in a single write. Neither its claimed-by label nor its claimed-by-uid annotation goes
// from one claim's value straight to another's (absent and '' both mean "no claim"); the label (or
// annotation) must be removed first. The webhook's /validate/pods rule and the simulator's
// invariant tracker read it from here; the pool-pod-labels policy must say it in CEL, and
// policy-cases.test.ts proves on every POLICY_CASE that the two statements agree, word for word.

import type { Violation } from '../api/admission-request.ts';
import { ANNOTATION_CLAIMED_BY_UID, LABEL_CLAIMED_BY } from '../api/constants.ts';
import { annotationPath, labelPath } from './read.ts';

type StringMap = Readonly<Record<string, string>>;

export interface ClaimHandover {
  from: string;
  to: string;
}

/** The claim `key` moves between in one write (from one non-empty value to another), if any. */
export function claimHandover(
  before: StringMap | undefined,
  after: StringMap | undefined,
  key: string = LABEL_CLAIMED_BY,
): ClaimHandover | undefined {
  const from = before?.[key] || undefined;
  const to = after?.[key] || undefined;
  return from !== undefined && to !== undefined && from !== to ? { from, to } : undefined;
}

export interface PodClaimMarks {
  labels?: StringMap | undefined;
  annotations?: StringMap | undefined;
}

/** P1's violations of a write from `before` to `after` (labels and annotations of the pod). */
export function claimHandoverViolations(before: PodClaimMarks, after: PodClaimMarks): Violation[] {
  const v: Violation[] = [];
  const label = claimHandover(before.labels, after.labels, LABEL_CLAIMED_BY);
  if (label !== undefined) {
    v.push({
      field: labelPath(LABEL_CLAIMED_BY),
      message: `a pod is never relabelled from one claim to another in a single write (${label.from} -> ${label.to}); the label must be removed first`,
    });
  }
  const uid = claimHandover(before.annotations, after.annotations, ANNOTATION_CLAIMED_BY_UID);
  if (uid !== undefined) {
    v.push({
      field: annotationPath(ANNOTATION_CLAIMED_BY_UID),
      message: `a pod is never handed from one claim to another in a single write (uid ${uid.from} -> ${uid.to}); the annotation must be removed first`,
    });
  }
  return v;
}
