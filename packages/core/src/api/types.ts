// The four claimkit kinds and the built-in kinds they touch, matching DESIGN.md and deploy/crds.
import type { Condition, KubeObject, LabelSelector, ObjectMeta } from './meta.ts';

export interface PodRef {
  name: string;
  uid: string;
}

// ---------- Capture ----------
export type CaptureBackendType = 'External' | 'Http' | 'Kubelet';
export type CapturePhase = 'Pending' | 'Capturing' | 'Captured' | 'Failed';

export interface CaptureSpec {
  selector: LabelSelector;
  container?: string;
  leaseSeconds: number;
  timeoutSeconds: number;
  maxAttempts: number;
  backend: { type: CaptureBackendType; url?: string };
}

export interface CaptureClaim {
  holder: PodRef;
  token: number;
  acquireTime: string;
  renewTime: string;
  leaseSeconds: number;
  /**
   * Job starts begun under this claim (written before the backend is called). More starts than a
   * recorded job means an earlier start was never recorded: whatever it produced is a spare.
   */
  jobStarts?: number;
  /** When the latest job start began (a next start waits CAPTURE_POLL_MS after it). */
  jobStartTime?: string;
  job?: { id: string; startTime?: string };
}

export interface CaptureResult {
  ref: string;
  token: number;
  capturedFrom: PodRef;
  completionTime: string;
}

export interface CaptureStatus {
  phase?: CapturePhase;
  epoch?: number;
  claim?: CaptureClaim;
  result?: CaptureResult;
  attempts?: number;
  takeovers?: number;
  lastError?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface Capture extends KubeObject {
  kind: 'Capture';
  spec: CaptureSpec;
  status?: CaptureStatus;
}

// ---------- PodPool ----------
export type ReleasePolicy = 'Recycle' | 'Delete';

export interface PodTemplateSpec {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}

export interface PodPoolSpec {
  template: PodTemplateSpec;
  minIdle: number;
  maxPods: number;
  releasePolicy: ReleasePolicy;
  drainSeconds: number;
  /**
   * When set, the controller keeps an owned PodDisruptionBudget `<pool>-bound` selecting the pool's
   * Bound pods (voluntary evictions, e.g. node drains, then wait for release); removing it deletes the PDB.
   */
  disruptionBudget?: DisruptionBudgetSpec;
  /**
   * When set, the pool's pods start from this Capture's result (same namespace), and only from a
   * fenced one: until the Capture has a fenced result the pool creates no pods (condition
   * SourceReady). Pods carry the result as annotations and env; a new fenced result rolls Idle pods.
   */
  source?: PodPoolSource;
}

export interface PodPoolSource {
  /** The Capture in the pool's namespace whose fenced result seeds every pod the pool creates. */
  captureName: string;
  /**
   * The container whose image an `image:` result ref replaces (default: the first container); it
   * must name a container of the template.
   */
  container?: string;
  /**
   * What the pool does with a pod that cannot be restored from an `image:` ref (pool/restore.ts):
   * Wait (default) keeps it (never handed out, the kubelet retries), Cold deletes it and starts the
   * pool's pods cold (the template's image) while a cold pod of that seed is left.
   */
  onRestoreFailure?: 'Wait' | 'Cold';
}

export interface DisruptionBudgetSpec {
  /** Bound pods that may be evicted at once (default 0: none). */
  maxUnavailable?: number;
}

export interface PodPoolStatus {
  total?: number;
  idle?: number;
  bound?: number;
  draining?: number;
  /** Pods of the current template, and of outdated ones (no hash label counts as outdated). */
  updated?: number;
  outdated?: number;
  /** Hash of the current spec.template; pods carry it as label claimkit.dev/template-hash. */
  templateHash?: string;
  /** The pool pods' label selector in string form, for the scale subresource (HPA, KEDA). */
  selector?: string;
  /**
   * The `image:` result whose pods start cold (pool/restore.ts: onRestoreFailure Cold, after a pod
   * of it could not be restored); until the source has another result or the policy is Wait.
   */
  coldStartRef?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface PodPool extends KubeObject {
  kind: 'PodPool';
  spec: PodPoolSpec;
  status?: PodPoolStatus;
}

// ---------- PodClaim ----------
export type PodClaimPhase = 'Pending' | 'Bound' | 'Migrating' | 'Lost';

/** Labels and annotations a claim puts on its pod in the bind's own write (none `claimkit.dev/*`). */
export interface PodMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** What a Lost claim does: bind a fresh pod (Rebind, the default) or stay Lost (Fail). */
export type LostPolicy = 'Rebind' | 'Fail';

export interface PodClaimSpec {
  poolName: string;
  /**
   * Legacy binding (releases before status.podName): read through api/claim-binding.ts only, moved to
   * status by the controller (reconcile/podclaim/legacy-binding.ts); never written again.
   */
  podName?: string;
  /** Legacy binding, as podName. */
  nodeName?: string;
  /** Legacy binding, as podName. */
  sourcePod?: string;
  podMetadata?: PodMetadata;
  lostPolicy?: LostPolicy;
}

/** A container port, as a pod's container declares it. */
export interface ContainerPortSpec {
  name?: string;
  containerPort: number;
  protocol?: string;
}

/** Where the claim's pod is (pool/pod-address.ts): written with the binding, removed without one. */
export interface ClaimAddress {
  podIPs: string[];
  hostIP?: string;
  ports?: ContainerPortSpec[];
}

export interface PodClaimStatus {
  phase?: PodClaimPhase;
  /**
   * The binding (api/claim-binding.ts reads it): the bound pod, its node and UID, and during a
   * migration the pod being left. Written only by the controller, with the phase, in one write (null
   * in a merge patch removes a field).
   */
  podName?: string | null;
  nodeName?: string | null;
  podUID?: string | null;
  sourcePod?: string | null;
  /** The bound pod's address (null in a merge patch removes it). */
  address?: ClaimAddress | null;
  boundTime?: string;
  lostTime?: string;
  migrations?: number;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface PodClaim extends KubeObject {
  kind: 'PodClaim';
  spec: PodClaimSpec;
  status?: PodClaimStatus;
}

// ---------- PodClaimSet ----------
export interface PodClaimSetSpec {
  replicas: number;
  selector: LabelSelector;
  template: {
    metadata?: { labels?: Record<string, string> };
    spec: { poolName: string; podMetadata?: PodMetadata; lostPolicy?: LostPolicy };
  };
}

export interface PodClaimSetStatus {
  replicas?: number;
  boundReplicas?: number;
  pending?: number;
  migrating?: number;
  lost?: number;
  labelSelector?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface PodClaimSet extends KubeObject {
  kind: 'PodClaimSet';
  spec: PodClaimSetSpec;
  status?: PodClaimSetStatus;
}

// ---------- built-in kinds (only the fields claimkit uses) ----------
export interface Container {
  name: string;
  image: string;
  [field: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  nodeName?: string;
  [field: string]: unknown;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** A container's state as the kubelet reports it (one of the three is set). */
export interface ContainerState {
  running?: { startedAt?: string };
  terminated?: { exitCode?: number; reason?: string; containerID?: string; [field: string]: unknown };
  waiting?: { reason?: string; [field: string]: unknown };
}

export interface ContainerStatus {
  name: string;
  /** `<runtime>://<id>` of the current container; empty before the first one started. */
  containerID?: string;
  restartCount?: number;
  state?: ContainerState;
  lastState?: ContainerState;
  [field: string]: unknown;
}

export interface PodStatus {
  phase?: PodPhase;
  conditions?: { type: string; status: string; [field: string]: unknown }[];
  podIP?: string;
  containerStatuses?: ContainerStatus[];
  [field: string]: unknown;
}

export interface Pod extends KubeObject {
  kind: 'Pod';
  spec: PodSpec;
  status?: PodStatus;
}

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  kind: 'Lease';
  spec: LeaseSpec;
}

export interface ConfigMap extends KubeObject {
  kind: 'ConfigMap';
  data?: Record<string, string>;
}

/** A cluster-scoped Node (namespace ''): only what "can this node serve a pod" needs. */
export interface Node extends KubeObject {
  kind: 'Node';
  spec: { unschedulable?: boolean; [field: string]: unknown };
  status?: {
    conditions?: { type: string; status: string; [field: string]: unknown }[];
    [field: string]: unknown;
  };
}

/** policy/v1 PodDisruptionBudget: the one a pool owns for its Bound pods (spec.disruptionBudget). */
export interface PodDisruptionBudget extends KubeObject {
  kind: 'PodDisruptionBudget';
  spec: { selector: LabelSelector; maxUnavailable?: number | string; minAvailable?: number | string };
  status?: { [field: string]: unknown };
}

export interface KubeEvent extends KubeObject {
  kind: 'Event';
  involvedObject: { apiVersion: string; kind: string; name: string; namespace: string; uid?: string };
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  source?: { component?: string };
}

export interface KindMap {
  Capture: Capture;
  PodPool: PodPool;
  PodClaim: PodClaim;
  PodClaimSet: PodClaimSet;
  Pod: Pod;
  Lease: Lease;
  ConfigMap: ConfigMap;
  Event: KubeEvent;
  Node: Node;
  PodDisruptionBudget: PodDisruptionBudget;
}

export type Kind = keyof KindMap;
export type AnyObject = KindMap[Kind];

/** Where a kind's scale subresource reads and writes (the CRD's subresources.scale). */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** autoscaling/v1 Scale: what GET/PUT/PATCH on `<plural>/<name>/scale` exchange. */
export interface Scale {
  apiVersion: 'autoscaling/v1';
  kind: 'Scale';
  metadata: ObjectMeta;
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

export const KIND_INFO: Record<
  Kind,
  {
    apiVersion: string;
    plural: string;
    hasStatusSubresource: boolean;
    hasSpec: boolean;
    scale?: ScalePaths;
  }
> = {
  Capture: {
    apiVersion: 'claimkit.dev/v1alpha1',
    plural: 'captures',
    hasStatusSubresource: true,
    hasSpec: true,
  },
  PodPool: {
    apiVersion: 'claimkit.dev/v1alpha1',
    plural: 'podpools',
    hasStatusSubresource: true,
    hasSpec: true,
    // replicas = the Idle target; current replicas = the Idle pods; selector = the pool's pods.
    scale: {
      specReplicasPath: '.spec.minIdle',
      statusReplicasPath: '.status.idle',
      labelSelectorPath: '.status.selector',
    },
  },
  PodClaim: {
    apiVersion: 'claimkit.dev/v1alpha1',
    plural: 'podclaims',
    hasStatusSubresource: true,
    hasSpec: true,
  },
  PodClaimSet: {
    apiVersion: 'claimkit.dev/v1alpha1',
    plural: 'podclaimsets',
    hasStatusSubresource: true,
    hasSpec: true,
    scale: {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.labelSelector',
    },
  },
  Pod: { apiVersion: 'v1', plural: 'pods', hasStatusSubresource: true, hasSpec: true },
  Lease: {
    apiVersion: 'coordination.k8s.io/v1',
    plural: 'leases',
    hasStatusSubresource: false,
    hasSpec: true,
  },
  ConfigMap: { apiVersion: 'v1', plural: 'configmaps', hasStatusSubresource: false, hasSpec: false },
  Event: { apiVersion: 'v1', plural: 'events', hasStatusSubresource: false, hasSpec: false },
  Node: { apiVersion: 'v1', plural: 'nodes', hasStatusSubresource: true, hasSpec: true },
  PodDisruptionBudget: {
    apiVersion: 'policy/v1',
    plural: 'poddisruptionbudgets',
    hasStatusSubresource: true,
    hasSpec: true,
  },
};

export type { ObjectMeta };
