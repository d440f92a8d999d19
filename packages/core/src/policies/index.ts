export * from './cases.ts';
export * from './evaluate.ts';
export * from './manifests.ts';
export * from './options.ts';
export {
  CONTROLLER_WRITTEN_FIELDS,
  controllerIdentityVariables,
  PODCLAIM_WRITERS,
  POLICY_LABELS,
  podClaimWritersPolicy,
} from './podclaim-writers.ts';
export { POOL_POD_LABELS, poolPodLabelsPolicy } from './pool-pod-labels.ts';
export type * from './types.ts';
export { ADMISSION_API_VERSION } from './types.ts';
