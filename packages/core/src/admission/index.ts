// @claimkit/core/admission: admission in core, one shape. The request and violation every step
// speaks, the webhook's rules (served over HTTP by @claimkit/webhook, run by the in-memory model and
// the simulator's admission layer), the claim index they consult, and P1 stated once. The
// ValidatingAdmissionPolicies stay in ../policies (the root entry): their rules are CEL text.

export * from '../api/admission-request.ts';
export * from './captures.ts';
export * from './claim-handover.ts';
export { MemoryPodClaimIndex } from './claim-index.ts';
export { claimSpecViolations } from './claim-spec.ts';
export * from './podclaims.ts';
export * from './pods.ts';
export * from './read.ts';
export { checkSelector } from './selector.ts';
export * from './sets-pools.ts';
export * from './webhook-rules.ts';
