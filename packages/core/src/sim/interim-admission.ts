// INTERIM: hand-written stand-ins for two layers of "Where each rule is enforced" (DESIGN.md) that
// are not in core yet, so the simulator can model "admission on" today:
//   - `interimCrdRules`: the CEL transition rules the generated CRDs are to carry for Captures
//     (replace by the real CEL evaluation of the CRDs in schema/validate.ts);
//   - `interimPolicyAdmission`: the who-writes rules of the ValidatingAdmissionPolicy component
//     (replace by evaluating the VAP objects of policies/).
// Delete this file once both land; `admissionLayer` in simulator.ts is the one place that uses it.
import { ANNOTATION_CLAIMED_BY_UID, LABEL_CLAIMED_BY, LABEL_POOL } from '../api/constants.ts';
import type { FieldCause } from '../api/errors.ts';
import type { KubeObject } from '../api/meta.ts';
import type { CaptureStatus, Kind, Pod, PodClaim } from '../api/types.ts';
import { type AdmissionCheck, type AdmissionDenial, CONTROLLER_USER } from '../model/admission.ts';

type Validator = (obj: KubeObject, old?: KubeObject) => FieldCause[];

/** Capture status rules one write's old and new state decide (C1). */
function captureTransitionRules(obj: KubeObject, old?: KubeObject): FieldCause[] {
  if (!old) return [];
  const s: CaptureStatus = (obj as { status?: CaptureStatus }).status ?? {};
  const o: CaptureStatus = (old as { status?: CaptureStatus }).status ?? {};
  const out: FieldCause[] = [];
  const epoch = s.epoch ?? 0;
  const oldEpoch = o.epoch ?? 0;
  if (epoch < oldEpoch) {
    out.push({
      field: 'status.epoch',
      message: `Invalid value: ${epoch}: epoch never decreases (was ${oldEpoch})`,
    });
  }
  const newClaim =
    s.claim !== undefined &&
    (o.claim === undefined || s.claim.token !== o.claim.token || s.claim.holder.uid !== o.claim.holder.uid);
  if (epoch !== oldEpoch && !(newClaim && s.claim!.token === epoch)) {
    out.push({
      field: 'status.epoch',
      message: `Invalid value: ${epoch}: the epoch moves only with a new claim whose token is the new epoch`,
    });
  }
  if (newClaim && (s.claim!.token !== epoch || s.claim!.token <= oldEpoch)) {
    out.push({
      field: 'status.claim.token',
      message: `Invalid value: ${s.claim!.token}: a new holder's token must be above the previous epoch (${oldEpoch}) and equal the new epoch (${epoch})`,
    });
  }
  if (s.result && JSON.stringify(s.result) !== JSON.stringify(o.result)) {
    if (o.claim?.token !== s.result.token || s.claim !== undefined) {
      out.push({
        field: 'status.result.token',
        message: `Invalid value: ${s.result.token}: a result is written only with the token of the claim it closes (${o.claim ? `token ${o.claim.token}` : 'no claim is held'})`,
      });
    }
  }
  return out;
}

export const interimCrdRules: Partial<Record<Kind, Validator>> = { Capture: captureTransitionRules };

const POLICY_CLAIM_FIELDS = 'claimkit-podclaim-controller-fields';
const POLICY_POD_CLAIMED_BY = 'claimkit-pool-pod-claimed-by';

const isController = (username: string) => username === CONTROLLER_USER.username;

/** The ValidatingAdmissionPolicy rules about who writes what (P1). */
export const interimPolicyAdmission: AdmissionCheck = (req) => {
  if (req.operation === 'DELETE' || req.subresource === 'status' || !req.object) return [];
  const out: AdmissionDenial[] = [];
  const controller = isController(req.user.username);
  if (req.kind === 'PodClaim' && !controller) {
    const spec: Partial<PodClaim['spec']> = (req.object as PodClaim).spec ?? {};
    const old: Partial<PodClaim['spec']> = (req.oldObject as PodClaim | undefined)?.spec ?? {};
    for (const f of ['podName', 'nodeName', 'sourcePod'] as const) {
      if ((spec[f] ?? '') !== (old[f] ?? '')) {
        out.push({
          policy: POLICY_CLAIM_FIELDS,
          message: `spec.${f} is written only by the claimkit controller, not by ${req.user.username}`,
        });
      }
    }
  }
  if (req.kind === 'Pod') {
    const pod = req.object as Pod;
    const old = req.oldObject as Pod | undefined;
    const pool = pod.metadata.labels?.[LABEL_POOL] ?? old?.metadata.labels?.[LABEL_POOL];
    if (pool === undefined) return out;
    const pairs = [
      [
        'label',
        LABEL_CLAIMED_BY,
        old?.metadata.labels?.[LABEL_CLAIMED_BY],
        pod.metadata.labels?.[LABEL_CLAIMED_BY],
      ],
      [
        'annotation',
        ANNOTATION_CLAIMED_BY_UID,
        old?.metadata.annotations?.[ANNOTATION_CLAIMED_BY_UID],
        pod.metadata.annotations?.[ANNOTATION_CLAIMED_BY_UID],
      ],
    ] as const;
    for (const [what, key, before, after] of pairs) {
      if (!after || after === before) continue;
      if (before) {
        out.push({
          policy: POLICY_POD_CLAIMED_BY,
          message: `${what} ${key} is never changed from one claim to another in one write (${before} -> ${after}); remove it first`,
        });
      } else if (!controller) {
        // A person may take a pod out of a claim (the controller repairs that), never hand one to a claim.
        out.push({
          policy: POLICY_POD_CLAIMED_BY,
          message: `${what} ${key} is set only by the claimkit controller, not by ${req.user.username}`,
        });
      }
    }
  }
  return out;
};
