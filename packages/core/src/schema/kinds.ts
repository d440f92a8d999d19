import type { KindSchema } from '../api/crd-schema.ts';
import type { Kind } from '../api/types.ts';
import { captureSchema } from './capture.ts';
import { podClaimSchema } from './pod-claim.ts';
import { podClaimSetSchema } from './pod-claim-set.ts';
import { podPoolSchema } from './pod-pool.ts';

export type CustomKind = 'Capture' | 'PodPool' | 'PodClaim' | 'PodClaimSet';

/** The four claimkit kinds, in the order deploy/crds lists them. */
export const KIND_SCHEMAS: Record<CustomKind, KindSchema> = {
  Capture: captureSchema,
  PodPool: podPoolSchema,
  PodClaim: podClaimSchema,
  PodClaimSet: podClaimSetSchema,
};

function isCustomKind(kind: string): kind is CustomKind {
  return Object.hasOwn(KIND_SCHEMAS, kind);
}

export function schemaFor(kind: Kind | string): KindSchema | undefined {
  return isCustomKind(kind) ? KIND_SCHEMAS[kind] : undefined;
}
