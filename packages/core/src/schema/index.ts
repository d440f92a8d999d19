export type * from '../api/crd-schema.ts';
export { captureSchema } from './capture.ts';
export * from './crd.ts';
export * from './kinds.ts';
export { podClaimSchema } from './pod-claim.ts';
export { podClaimSetSchema } from './pod-claim-set.ts';
export { isDnsSubdomain, podPoolSchema } from './pod-pool.ts';
export * from './validate.ts';
export { toYaml } from './yaml.ts';
