// The safety rules the reconcilers and the holder operations apply, as one plain record of functions.
// Production passes nothing and gets SAFETY_RULES. A test may pass a record with one rule replaced by
// a variant broken on purpose (testing/broken-rules.ts), through the deps of a reconcile or the
// simulator's options, to prove the invariant checks catch it. Nothing is global: a variant reaches
// only the calls it is handed to.
import type { ClaimBinding } from '../api/claim-binding.ts';
import { completeClaim } from '../capture/claim.ts';
import { classifyHolder } from '../capture/holder-liveness.ts';
import { chooseScaleIn } from '../claimset/scale-in.ts';
import { isLostForGood } from '../pool/lost-policy.ts';
import { bindPodWrite, releasePodWrite } from '../pool/pods.ts';
import { judgePoolSource } from '../pool/source.ts';
import { finalize } from './podclaim/finalize.ts';
import { dropPodReference, judgeReferencedPod } from './podclaim/hold.ts';

export interface SafetyRules {
  /** C1: a result is written only with the open claim's token. */
  completeClaim: typeof completeClaim;
  /** C2: only a definite answer makes a holder dead. */
  classifyHolder: typeof classifyHolder;
  /** P1: a pod is bound by compare-and-swap on its resourceVersion. */
  bindPodWrite: typeof bindPodWrite;
  /** P2: a claim whose pod is lost stops referencing it. */
  dropPodReference: (b: ClaimBinding) => ClaimBinding;
  /** P3: a deleting claim's finalizer completes; a pod another claim references keeps that claim. */
  finalize: typeof finalize;
  /** P4: scale-in never picks a migrating claim. */
  chooseScaleIn: typeof chooseScaleIn;
  /** P5: a pod released to the pool carries no claimed-by label. */
  releasePodWrite: typeof releasePodWrite;
  /** P7: a label naming another claim takes a pod only when that claim holds it. */
  judgeReferencedPod: typeof judgeReferencedPod;
  /** L1: a claim Lost under lostPolicy Fail binds no fresh pod. */
  isLostForGood: typeof isLostForGood;
  /** S1: only a fenced Capture result seeds a pool's pods (PodPool spec.source). */
  judgePoolSource: typeof judgePoolSource;
}

export const SAFETY_RULES: SafetyRules = Object.freeze({
  completeClaim,
  classifyHolder,
  bindPodWrite,
  dropPodReference,
  finalize,
  chooseScaleIn,
  releasePodWrite,
  judgeReferencedPod,
  isLostForGood,
  judgePoolSource,
});
