export const GROUP = 'claimkit.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Pool pods carry these labels; see DESIGN.md "PodPool". */
export const LABEL_POOL = 'claimkit.dev/pool';
export const LABEL_STATE = 'claimkit.dev/state';
export const LABEL_CLAIMED_BY = 'claimkit.dev/claimed-by';
export const ANNOTATION_CLAIMED_BY_UID = 'claimkit.dev/claimed-by-uid';
/**
 * On a PodClaim: `<pod name>/<pod UID>` of the pod it bound, recorded by the write that sets podName.
 * A pod of that name with another UID replaced it (delete + create, kubectl replace --force).
 */
export const ANNOTATION_POD_UID = 'claimkit.dev/pod-uid';

/**
 * On a PodClaim, with tracing on: the W3C traceparent (`00-<trace id>-<span id>-01`) of the claim's
 * trace, recorded by the controller's first spec write of the claim so other tools can join it. Set
 * at create by a tool, it makes the claim's trace part of that tool's (harmless: trace ids only).
 */
export const ANNOTATION_TRACEPARENT = 'claimkit.dev/traceparent';

/**
 * On a PodPool: the controller shard that reconciles it and its claims (loop/shard.ts), a decimal
 * integer taken modulo the number of shards, in place of the hash of the pool's name.
 */
export const ANNOTATION_SHARD = 'claimkit.dev/shard';

/** Migration is requested on a PodClaim with these annotations. */
export const ANNOTATION_MIGRATE = 'claimkit.dev/migrate';
export const ANNOTATION_MIGRATE_TO = 'claimkit.dev/migrate-to';

/**
 * Pool pods a PodPool starts from a Capture's fenced result (spec.source) carry these annotations:
 * the Capture's name, the result's ref and its token. Only the controller sets them; anyone may
 * remove them (DESIGN.md "PodPool": only a fenced result may seed a pool).
 */
export const ANNOTATION_SOURCE_CAPTURE = 'claimkit.dev/source-capture';
export const ANNOTATION_SOURCE_REF = 'claimkit.dev/source-ref';
export const ANNOTATION_SOURCE_TOKEN = 'claimkit.dev/source-token';
export const SOURCE_ANNOTATIONS = [
  ANNOTATION_SOURCE_CAPTURE,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
] as const;
/** ...and every container of such a pod these environment variables, so the app can warm-start. */
export const ENV_SOURCE_REF = 'CLAIMKIT_SOURCE_REF';
export const ENV_SOURCE_TOKEN = 'CLAIMKIT_SOURCE_TOKEN';
/**
 * A result ref with this prefix names a checkpoint OCI image (e.g. `image:localhost/ckpt/web:7`):
 * the source container's image is set to the rest (a runtime that restores from it: CRI-O).
 */
export const SOURCE_IMAGE_PREFIX = 'image:';

/** PodClaimSet claims carry the set's name so the set can select them. */
export const LABEL_CLAIM_SET = 'claimkit.dev/claim-set';

export const FINALIZER_RELEASE = 'claimkit.dev/release';

export const POD_STATES = ['Idle', 'Bound', 'Draining'] as const;
export type PodState = (typeof POD_STATES)[number];

/** The field manager / identity the controller writes as; the webhook lets only it set claim spec fields. */
export const CONTROLLER_NAME = 'claimkit-controller';
/** The namespace claimkit's components are installed in by default (controller, webhook, agent). */
export const SYSTEM_NAMESPACE = 'claimkit-system';
/** The node port every capture agent serves the Http capture protocol on (hostPort = containerPort). */
export const CAPTURE_AGENT_PORT = 8750;

/** Disruption hints on pool pods (pool/disruption-hints.ts says when each is set). */
export const ANNOTATION_DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
export const ANNOTATION_SAFE_TO_EVICT = 'cluster-autoscaler.kubernetes.io/safe-to-evict';
export const ANNOTATION_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

/** The annotations the controller owns on pool pods (a claim's podMetadata may not set them). */
export const HINT_ANNOTATIONS = [
  ANNOTATION_DO_NOT_DISRUPT,
  ANNOTATION_SAFE_TO_EVICT,
  ANNOTATION_DELETION_COST,
] as const;
