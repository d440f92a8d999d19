// /validate/pods — invariant P1 at the pod (DESIGN.md "PodPool"): a pool pod is never relabelled from
// one claim to another in a single write, and its state label, claimed-by label and claimed-by-uid
// annotation agree. Consistency is checked only when a write touches those keys (or creates the pod),
// so that pods which were inconsistent before the webhook existed can still be repaired step by step.
// Only the controller names a claim, sets the template hash or the source annotations (anyone may
// remove them).

import type { AdmissionRequest, RuleContext, Verdict, Violation } from '../api/admission-request.ts';
import { isController, verdict } from '../api/admission-request.ts';
import {
  ANNOTATION_CLAIMED_BY_UID,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  POD_STATES,
  type PodState,
  SOURCE_ANNOTATIONS,
} from '../api/constants.ts';
import { LABEL_TEMPLATE_HASH } from '../pool/template-hash.ts';
import { claimHandoverViolations } from './claim-handover.ts';
import { annotationPath, annotationsOf, labelPath, labelsOf, obj } from './read.ts';

export function validatePod(input: AdmissionRequest, ctx: RuleContext): Verdict {
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return verdict([]);
  const v: Violation[] = [];
  const warnings: string[] = [];
  if (obj(input.object) === undefined) return verdict([{ field: '', message: 'a Pod object is required' }]);
  const metaRaw = (input.object as Record<string, unknown>).metadata;
  if (obj(metaRaw) === undefined) return verdict([{ field: 'metadata', message: 'must be an object' }]);
  const oldLabels = input.operation === 'UPDATE' ? labelsOf(input.oldObject) : {};
  const oldAnn = input.operation === 'UPDATE' ? annotationsOf(input.oldObject) : {};
  const labels = labelsOf(input.object);
  const ann = annotationsOf(input.object);

  // P1: never from one claim to another in a single write (claim-handover.ts states it once).
  v.push(
    ...claimHandoverViolations({ labels: oldLabels, annotations: oldAnn }, { labels, annotations: ann }),
  );
  const oldClaim = oldLabels[LABEL_CLAIMED_BY] || undefined;
  const newClaim = labels[LABEL_CLAIMED_BY] || undefined;
  const oldUid = oldAnn[ANNOTATION_CLAIMED_BY_UID] || undefined;
  const newUid = ann[ANNOTATION_CLAIMED_BY_UID] || undefined;

  // A person may remove a claim's label but never name a claim: otherwise a pod is stolen in two
  // writes (remove, then add another claim's name). Pool pods only, as the objectSelector says.
  const inPool = labels[LABEL_POOL] !== undefined || oldLabels[LABEL_POOL] !== undefined;
  if (inPool && !isController(input.userInfo, ctx.controller)) {
    const who = JSON.stringify(input.userInfo.username ?? '<unknown>');
    // Keys only the controller may set (or change); anyone may remove them. The claim's label and
    // UID name its holder; the template hash says which template made the pod (rollout decides on
    // it, so an outdated pod cannot be made to look current); the source annotations say which
    // fenced Capture result seeded it (so a pod cannot look seeded from a result it was not).
    const controllerOnly: [string, string | undefined, string | undefined][] = [
      [labelPath(LABEL_CLAIMED_BY), oldClaim, newClaim],
      [annotationPath(ANNOTATION_CLAIMED_BY_UID), oldUid, newUid],
      [
        labelPath(LABEL_TEMPLATE_HASH),
        oldLabels[LABEL_TEMPLATE_HASH] || undefined,
        labels[LABEL_TEMPLATE_HASH] || undefined,
      ],
      ...SOURCE_ANNOTATIONS.map((key): [string, string | undefined, string | undefined] => [
        annotationPath(key),
        oldAnn[key] || undefined,
        ann[key] || undefined,
      ]),
    ];
    for (const [field, before, after] of controllerOnly)
      if (after !== undefined && after !== before)
        v.push({
          field,
          message: `is set only by the claimkit controller, not by ${who}; anyone may remove it`,
        });
  }

  const pool = labels[LABEL_POOL];
  const touched =
    input.operation === 'CREATE' ||
    oldLabels[LABEL_POOL] !== pool ||
    oldLabels[LABEL_STATE] !== labels[LABEL_STATE] ||
    oldLabels[LABEL_CLAIMED_BY] !== labels[LABEL_CLAIMED_BY] ||
    oldAnn[ANNOTATION_CLAIMED_BY_UID] !== ann[ANNOTATION_CLAIMED_BY_UID];
  if (pool !== undefined && touched) {
    const state = labels[LABEL_STATE];
    if (state === undefined || !(POD_STATES as readonly string[]).includes(state)) {
      v.push({
        field: labelPath(LABEL_STATE),
        message: `a pool pod needs ${LABEL_STATE} in ${POD_STATES.join('|')}, got ${state === undefined ? 'none' : JSON.stringify(state)}`,
      });
    }
    const s = state as PodState | undefined;
    if (s === 'Idle' && newClaim !== undefined) {
      v.push({
        field: labelPath(LABEL_CLAIMED_BY),
        message: `an Idle pod must not be claimed (claimed-by ${newClaim}); set the state first or remove the label`,
      });
    }
    if (newClaim !== undefined && newUid === undefined) {
      v.push({
        field: annotationPath(ANNOTATION_CLAIMED_BY_UID),
        message: `is required while ${LABEL_CLAIMED_BY} is set (${newClaim})`,
      });
    }
    if (newClaim === undefined && newUid !== undefined) {
      v.push({
        field: annotationPath(ANNOTATION_CLAIMED_BY_UID),
        message: `must be removed together with ${LABEL_CLAIMED_BY}`,
      });
    }
    if (s === 'Bound' && newClaim === undefined) {
      warnings.push(`pod is Bound without ${LABEL_CLAIMED_BY}: it should name its claim`);
    }
  }
  return verdict(v, warnings);
}
