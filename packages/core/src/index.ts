// @claimkit/core: the library an operator embeds, and its public surface (every name listed, none
// re-exported wholesale). The api/ layer whole: the API types and constants, the ports, errors,
// labels, metadata, logging and pod predicates. Above it, what the runtimes, tools and READMEs use:
// capture claims and the holder's operations, the leader lease, pool rules the runtimes share, the
// reconcilers with their deps and safety rules, event routing, the index of the rules (README's
// table), CRD schemas, admission policies and manifest rendering. Elsewhere: the in-memory API model
// `./model`, the simulator `./sim`, doctor `./doctor`, test support (fixtures, invariant checks, the
// policy cases) `./testing`, Prometheus metrics `./metrics`. scripts/check-boundaries.ts fails on an
// export nothing uses.
export {
  bindingOf,
  type ClaimBinding,
  hasLegacyBinding,
  nodeNameOf,
  podNameOf,
  REFERENCE_INDEX_FIELDS,
  referencesPod,
  sourcePodOf,
} from './api/claim-binding.ts';
export { type ConditionSpec, findCondition, hasCondition, setCondition } from './api/conditions.ts';
export {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_DELETION_COST,
  ANNOTATION_DO_NOT_DISRUPT,
  ANNOTATION_MIGRATE,
  ANNOTATION_MIGRATE_TO,
  ANNOTATION_POD_UID,
  ANNOTATION_SAFE_TO_EVICT,
  ANNOTATION_SHARD,
  ANNOTATION_SOURCE_CAPTURE,
  ANNOTATION_SOURCE_REF,
  ANNOTATION_SOURCE_TOKEN,
  ANNOTATION_TRACEPARENT,
  API_VERSION,
  CAPTURE_AGENT_PORT,
  CONTROLLER_NAME,
  ENV_SOURCE_REF,
  ENV_SOURCE_TOKEN,
  FINALIZER_RELEASE,
  GROUP,
  HINT_ANNOTATIONS,
  LABEL_CLAIM_SET,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  POD_STATES,
  type PodState,
  SOURCE_ANNOTATIONS,
  SOURCE_IMAGE_PREFIX,
  SYSTEM_NAMESPACE,
  VERSION,
} from './api/constants.ts';
export type {
  JSONSchemaProps,
  KindSchema,
  PrinterColumn,
  ScaleSubresource,
  SchemaType,
  ValidationRule,
} from './api/crd-schema.ts';
export type { Decision, EventDetail, EventSpec, Write, WriteIntent } from './api/decision.ts';
export { event, writeTarget } from './api/decision.ts';
export {
  ApiError,
  type ApiErrorReason,
  type FieldCause,
  getOrUndefined,
  isApiError,
  isConflict,
  isNotFound,
} from './api/errors.ts';
export {
  type ApiCall,
  type CallHook,
  type CallResult,
  type CallResults,
  type Intercepted,
  type Interceptors,
  intercept,
  type WatchCall,
} from './api/interceptor.ts';
export { applyMergePatch, clone, deepEqual, getPath } from './api/json.ts';
export { formatSelector, matchesSelector, parseSelector } from './api/labels.ts';
export { matchesList } from './api/list-match.ts';
export {
  createLogger,
  formatLogLine,
  formatTextLine,
  isLogLevel,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFields,
  type LogFormat,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  parseLogLevel,
  silentLogger,
} from './api/log.ts';
export {
  type Condition,
  type ConditionStatus,
  type KubeObject,
  keyOf,
  keyString,
  type LabelSelector,
  type LabelSelectorRequirement,
  type ObjectKey,
  type ObjectMeta,
  type OwnerReference,
  parseKey,
  parseTimestamp,
  toSecondsTimestamp,
  toTimestamp,
} from './api/meta.ts';
export {
  canListOldestFirst,
  compareOldestFirst,
  listOldestFirst,
  type OldestFirstKey,
  type OldestFirstOptions,
  type OldestFirstPage,
  type OldestFirstReader,
  oldestFirstKey,
  oldestFirstPage,
} from './api/oldest-first.ts';
export { podFieldsRead } from './api/pod-fields.ts';
export { isDeleting, isPodFinished, isPodReady } from './api/pod-predicates.ts';
export type {
  Client,
  DeleteOptions,
  DeletePreconditions,
  InformerHandler,
  ListOptions,
  ListWatcher,
  MergePatch,
  ObjectList,
  PatchOptions,
  Reader,
  StatusWriter,
  Timers,
  WatchEvent,
  WatchEventType,
  Watcher,
  WatchHandlers,
  WatchOptions,
  Writer,
} from './api/ports.ts';
export {
  type AttributeValue,
  parseTraceparent,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
} from './api/tracing.ts';
export {
  type AnyObject,
  type Capture,
  type CaptureBackendType,
  type CaptureClaim,
  type CapturePhase,
  type CaptureResult,
  type CaptureSpec,
  type CaptureStatus,
  type ClaimAddress,
  type ConfigMap,
  type Container,
  type ContainerPortSpec,
  type ContainerState,
  type ContainerStatus,
  type DisruptionBudgetSpec,
  KIND_INFO,
  type Kind,
  type KindMap,
  type KubeEvent,
  type Lease,
  type LeaseSpec,
  type LostPolicy,
  type Node,
  type Pod,
  type PodClaim,
  type PodClaimPhase,
  type PodClaimSet,
  type PodClaimSetSpec,
  type PodClaimSetStatus,
  type PodClaimSpec,
  type PodClaimStatus,
  type PodDisruptionBudget,
  type PodMetadata,
  type PodPhase,
  type PodPool,
  type PodPoolSource,
  type PodPoolSpec,
  type PodPoolStatus,
  type PodRef,
  type PodSpec,
  type PodStatus,
  type PodTemplateSpec,
  type ReleasePolicy,
  type Scale,
  type ScalePaths,
} from './api/types.ts';
export {
  type ClientVerb,
  isWriteVerb,
  REQUEST_VERBS,
  type RequestVerb,
  subresourceOf,
  WRITE_VERBS,
  type WriteVerb,
} from './api/verbs.ts';
export {
  type CaptureBackend,
  type CaptureJobRequest,
  expandBackendUrl,
  type JobState,
} from './capture/backend.ts';
export { ClaimSuperseded, claimExpiry } from './capture/claim.ts';
export {
  acquireCapture,
  completeCapture,
  failCapture,
  releaseCapture,
  renewCapture,
  retryFailedCapture,
} from './capture/holder-ops.ts';
export { type StartVerdict, TokenFence, type TokenFenceState } from './capture/token-fence.ts';
export {
  LEASE_HOLDER_UID,
  type LeaderLeaseParams,
  type LeaseHolderPod,
  type LeaseStepResult,
  leaseHolderPod,
  leaseStep,
  ownContainer,
  releaseLeaderLease,
  type TakeoverReason,
  toMicroTime,
} from './lease/leader-lease.ts';
export {
  DEFAULT_POOL_COALESCE_MS,
  DEFAULT_POOL_HEADROOM_COALESCE_MS,
  hasIdleHeadroom,
} from './loop/coalesce.ts';
export { EventRouter } from './loop/event-router.ts';
export { mapEvent, type RoutingView, type WatchedKind } from './loop/map-event.ts';
export { OwnWrites } from './loop/own-writes.ts';
export { ProcessMemory } from './loop/process-memory.ts';
export type { QueueAction } from './loop/queue-policy.ts';
export {
  parseReconcileKey,
  RECONCILE_KINDS,
  type ReconcileKind,
  reconcileKey,
} from './loop/reconcile-key.ts';
export { reconcileTurn, type Turn, type TurnIdentity } from './loop/reconcile-turn.ts';
export { reconcile } from './loop/reconcilers.ts';
export type { RoutedKind } from './loop/routed-key.ts';
export {
  ONE_SHARD,
  ownsKey,
  parseShard,
  runsClusterWideWork,
  type Shard,
  shardLeaseName,
  shardOfPool,
} from './loop/shard.ts';
export { ROUTED_KINDS, WATCH_TABLE, type WatchSpec, watchedKinds } from './loop/watch-table.ts';
export { WorkQueue, type WorkQueueOptions } from './loop/work-queue.ts';
export {
  IMAGE_COMPONENTS,
  IMAGE_REGISTRY,
  type ImageComponent,
  imageRef,
  imageRepository,
} from './manifests/images.ts';
export type { ManifestFile } from './manifests/manifest-file.ts';
export { CLAIMKIT_VERSION } from './manifests/release.generated.ts';
export {
  admissionPolicies,
  admissionPolicyObjects,
  POLICY_NAMES,
  policiesManifests,
} from './policies/manifests.ts';
export { DEFAULT_CONTROLLER_SERVICE_ACCOUNT, DEFAULT_CONTROLLER_USERNAME } from './policies/options.ts';
export { PODCLAIM_WRITERS } from './policies/podclaim-writers.ts';
export { POOL_POD_LABELS } from './policies/pool-pod-labels.ts';
export { CANDIDATE_WINDOW } from './pool/bind-candidates.ts';
export { BIND_HOLD_TTL_MS, BindsInFlight } from './pool/binds-in-flight.ts';
export { ClaimIndex, type ReferencingClaim } from './pool/claim-index.ts';
export { PoolExpectations } from './pool/expectations.ts';
export { ANNOTATION_POD_METADATA_KEYS, isReservedPodMetadataKey } from './pool/pod-metadata.ts';
export {
  isQuietIdle,
  PoolPodIndex,
  type PoolPodsSource,
  type PoolPodsView,
} from './pool/pool-pod-index.ts';
export { nodeCanServe } from './pool/serving.ts';
export { MAX_SHARDS, shardPin, shardPinProblem } from './pool/shard-pin.ts';
export { POOL_STATUS_MIN_INTERVAL_MS, PoolStatusPacer } from './pool/status-pacer.ts';
export { LABEL_TEMPLATE_HASH } from './pool/template-hash.ts';
export { applyDecision, type EventRecorder } from './reconcile/apply.ts';
export { reconcileCapture } from './reconcile/capture/index.ts';
export type { CaptureDeps } from './reconcile/capture/snapshot.ts';
export { sweepCaptures } from './reconcile/capture/sweep.ts';
export type { PodClaimDeps } from './reconcile/podclaim/deps.ts';
export { reconcilePodClaim } from './reconcile/podclaim/index.ts';
export { type PodClaimSetDeps, reconcilePodClaimSet } from './reconcile/podclaimset/index.ts';
export { type PodPoolDeps, reconcilePodPool } from './reconcile/podpool/index.ts';
export {
  EVENT_QUEUE_CAPACITY,
  EVENT_WRITERS,
  QueuedEventRecorder,
  type QueuedEventRecorderOptions,
} from './reconcile/queued-event-recorder.ts';
export { SAFETY_RULES, type SafetyRules } from './reconcile/safety-rules.ts';
export type { AppliedDecision, StepObserver, StepStages } from './reconcile/step.ts';
export { RULES } from './rules/index.ts';
export { renderRulesTable } from './rules/table.ts';
export { crdFileName, crdFor } from './schema/crd.ts';
export { KIND_SCHEMAS } from './schema/kinds.ts';
export { isDnsSubdomain } from './schema/pod-pool.ts';
export { toYaml } from './schema/yaml.ts';
