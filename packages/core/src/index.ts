// @claimkit/core: the library an operator embeds. The API types and ports, capture claims and the
// holder's operations, warm-pod pools, the reconcilers (their safety rules and their one step),
// event routing, CEL, CRD schemas, admission policies, the leader lease and manifest rendering.
// Elsewhere: the in-memory API model `./model`, the simulator `./sim`, doctor `./doctor`, test
// support and the invariant checks `./testing`, Prometheus metrics `./metrics`.
export * from './api/conditions.ts';
export * from './api/constants.ts';
export * from './api/errors.ts';
export * from './api/interceptor.ts';
export * from './api/json.ts';
export * from './api/labels.ts';
export * from './api/list-match.ts';
export * from './api/log.ts';
export * from './api/meta.ts';
export type * from './api/ports.ts';
export * from './api/types.ts';
export * from './api/verbs.ts';
export * from './capture/backend.ts';
export * from './capture/candidates.ts';
export * from './capture/claim.ts';
export * from './capture/holder-ops.ts';
export * from './capture/liveness.ts';
export * from './capture/result-fence.ts';
export * from './cel/index.ts';
export * from './claimset/claim-names.ts';
export * from './claimset/scale-in.ts';
export * from './lease/leader-lease.ts';
export * from './loop/map-event.ts';
export * from './loop/reconcile-key.ts';
export * from './loop/reconcilers.ts';
export * from './manifests/images.ts';
export * from './manifests/manifest-file.ts';
export * from './manifests/release.generated.ts';
export * from './policies/index.ts';
export * from './pool/candidates.ts';
export * from './pool/claim-index.ts';
export * from './pool/disruption-budget.ts';
export * from './pool/disruption-hints.ts';
export * from './pool/expectations.ts';
export * from './pool/lost-policy.ts';
export * from './pool/pod-metadata.ts';
export * from './pool/pods.ts';
export * from './pool/rollout.ts';
export * from './pool/rollout-status.ts';
export * from './pool/scaling.ts';
export * from './pool/serving.ts';
export * from './pool/template-hash.ts';
export * from './reconcile/apply.ts';
export * from './reconcile/capture/index.ts';
export * from './reconcile/capture/sweep.ts';
export * from './reconcile/decision.ts';
export * from './reconcile/podclaim/index.ts';
export * from './reconcile/podclaimset/index.ts';
export * from './reconcile/podpool/index.ts';
export * from './reconcile/safety-rules.ts';
export * from './reconcile/step.ts';
export * from './schema/index.ts';
