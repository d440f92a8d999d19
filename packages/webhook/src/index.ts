// The rules and the claim index live in core (@claimkit/core/admission); re-exported for users of
// the webhook package, which serves them.
export {
  type ControllerIdentities,
  isController,
  MemoryPodClaimIndex,
  type Operation,
  type PodClaimIndex,
  type PodClaimRef,
  type Rule,
  type RuleContext,
  type UserInfo,
  type Verdict,
  type Violation,
  validateCapture,
  validatePod,
  validatePodClaim,
  validatePodClaimSet,
  validatePodPool,
  verdict,
} from '@claimkit/core/admission';
export * from './admission.ts';
export * from './app.ts';
export * from './config.ts';
export * from './logger.ts';
export * from './manifests.ts';
export * from './metrics.ts';
