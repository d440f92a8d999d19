// Fixture builders for every test in the workspace, cert-manager style:
//   capture('c', withSelector({ app: 'db' }), withLease(60), heldBy(pod('a'), { token: 3 }))
//   pod('web-1', inPool('web'), idle(), ready(), onNode('n1'))
// A builder returns a complete object with DESIGN.md's defaults; each modifier changes one thing.
// Objects get a deterministic UID and creationTimestamp from the name, so pure decisions can be
// tested without an API model; the model replaces both on create.
import {
  ANNOTATION_CLAIMED_BY_UID,
  ANNOTATION_MIGRATE,
  ANNOTATION_MIGRATE_TO,
  API_VERSION,
  FINALIZER_RELEASE,
  LABEL_CLAIM_SET,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type PodState,
} from '../api/constants.ts';
import type { Condition, ConditionStatus, KubeObject, LabelSelector, OwnerReference } from '../api/meta.ts';
import type {
  Capture,
  CaptureBackendType,
  CaptureClaim,
  CapturePhase,
  CaptureStatus,
  ConfigMap,
  Lease,
  LostPolicy,
  Node,
  Pod,
  PodClaim,
  PodClaimPhase,
  PodClaimSet,
  PodClaimSetStatus,
  PodClaimStatus,
  PodMetadata,
  PodPhase,
  PodPool,
  PodPoolStatus,
  PodRef,
  PodSpec,
  PodStatus,
  PodTemplateSpec,
  ReleasePolicy,
} from '../api/types.ts';
import { LABEL_TEMPLATE_HASH, templateHash } from '../pool/template-hash.ts';

/** A modifier: changes one aspect of a fixture in place. */
export type Mod<T> = (obj: T) => void;

/** The fixtures' epoch: 2026-01-01T00:00:00Z, the model's default clock start. */
export const T0_MS = Date.UTC(2026, 0, 1);

/** An RFC 3339 timestamp `seconds` after T0 (second precision, as Kubernetes writes metadata). */
export function at(seconds: number): string {
  return new Date(T0_MS + seconds * 1000).toISOString().replace('.000Z', 'Z');
}

export const DEFAULT_NAMESPACE = 'default';
export const DEFAULT_IMAGE = 'registry.example/claimkit/app:1';

/** A deterministic, UUID-shaped UID for a kind and name (FNV-1a), stable across runs. */
export function uidFor(kind: string, name: string, namespace = DEFAULT_NAMESPACE): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (const ch of `${kind}/${namespace}/${name}`) {
    h1 = Math.imul(h1 ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ ch.charCodeAt(0), 0x85ebca6b) >>> 0;
  }
  const a = h1.toString(16).padStart(8, '0');
  const b = h2.toString(16).padStart(8, '0');
  return `${a}-${b.slice(0, 4)}-4${b.slice(4, 7)}-8${a.slice(0, 3)}-${b}${a.slice(4, 8)}`;
}

function build<T extends KubeObject>(obj: T, mods: Mod<T>[]): T {
  for (const m of mods) m(obj);
  return obj;
}

function meta(kind: string, name: string): KubeObject['metadata'] {
  return {
    name,
    namespace: DEFAULT_NAMESPACE,
    uid: uidFor(kind, name),
    creationTimestamp: at(0),
  };
}

// ---------------- any object ----------------

export const inNamespace =
  (namespace: string): Mod<KubeObject> =>
  (o) => {
    o.metadata.namespace = namespace;
    o.metadata.uid = uidFor(o.kind, o.metadata.name, namespace);
  };

export const withUid =
  (uid: string): Mod<KubeObject> =>
  (o) => {
    o.metadata.uid = uid;
  };

export const withResourceVersion =
  (resourceVersion: string): Mod<KubeObject> =>
  (o) => {
    o.metadata.resourceVersion = resourceVersion;
  };

export const withGeneration =
  (generation: number): Mod<KubeObject> =>
  (o) => {
    o.metadata.generation = generation;
  };

export const withLabels =
  (labels: Record<string, string>): Mod<KubeObject> =>
  (o) => {
    o.metadata.labels = { ...o.metadata.labels, ...labels };
  };

export const withoutLabel =
  (key: string): Mod<KubeObject> =>
  (o) => {
    if (o.metadata.labels) delete o.metadata.labels[key];
  };

export const withAnnotations =
  (annotations: Record<string, string>): Mod<KubeObject> =>
  (o) => {
    o.metadata.annotations = { ...o.metadata.annotations, ...annotations };
  };

export const withFinalizers =
  (...finalizers: string[]): Mod<KubeObject> =>
  (o) => {
    o.metadata.finalizers = [...(o.metadata.finalizers ?? []), ...finalizers];
  };

/** Created `seconds` after T0 (full RFC 3339 string; candidate order uses it). */
export const createdAt =
  (seconds: number): Mod<KubeObject> =>
  (o) => {
    o.metadata.creationTimestamp = at(seconds);
  };

/** Being deleted since `seconds` after T0. */
export const deleting =
  (seconds = 0, gracePeriodSeconds = 0): Mod<KubeObject> =>
  (o) => {
    o.metadata.deletionTimestamp = at(seconds);
    o.metadata.deletionGracePeriodSeconds = gracePeriodSeconds;
  };

/** Adds an ownerReference to `owner` (controller by default). */
export const ownedBy =
  (owner: KubeObject, controller = true): Mod<KubeObject> =>
  (o) => {
    const ref: OwnerReference = {
      apiVersion: owner.apiVersion,
      kind: owner.kind,
      name: owner.metadata.name,
      uid: owner.metadata.uid ?? uidFor(owner.kind, owner.metadata.name),
      controller,
      blockOwnerDeletion: true,
    };
    o.metadata.ownerReferences = [...(o.metadata.ownerReferences ?? []), ref];
  };

/** Sets or replaces a status condition (Capture, PodPool, PodClaim, PodClaimSet). */
export const withCondition =
  (
    type: string,
    status: ConditionStatus,
    opts: { reason?: string; message?: string; atSeconds?: number; observedGeneration?: number } = {},
  ): Mod<{ status?: { conditions?: Condition[] } }> =>
  (o) => {
    o.status ??= {};
    const c: Condition = {
      type,
      status,
      reason: opts.reason ?? 'Test',
      message: opts.message ?? '',
      lastTransitionTime: at(opts.atSeconds ?? 0),
    };
    if (opts.observedGeneration !== undefined) c.observedGeneration = opts.observedGeneration;
    o.status.conditions = [...(o.status.conditions ?? []).filter((x) => x.type !== type), c];
  };

/** The name and UID of an object, e.g. a pod as a Capture holder. */
export function refOf(o: KubeObject): PodRef {
  return { name: o.metadata.name, uid: o.metadata.uid ?? uidFor(o.kind, o.metadata.name) };
}

// ---------------- Capture ----------------

export function capture(name: string, ...mods: Mod<Capture>[]): Capture {
  return build<Capture>(
    {
      apiVersion: API_VERSION,
      kind: 'Capture',
      metadata: meta('Capture', name),
      spec: {
        selector: { matchLabels: { app: name } },
        leaseSeconds: 3000,
        timeoutSeconds: 1800,
        maxAttempts: 3,
        backend: { type: 'External' },
      },
    },
    mods,
  );
}

/** Candidate pods: a label map, or a full LabelSelector. */
export const withSelector =
  (sel: Record<string, string> | LabelSelector): Mod<Capture | PodClaimSet> =>
  (o) => {
    const isSelector = 'matchLabels' in sel || 'matchExpressions' in sel;
    o.spec.selector = isSelector ? (sel as LabelSelector) : { matchLabels: sel as Record<string, string> };
  };

export const withLease =
  (leaseSeconds: number): Mod<Capture> =>
  (o) => {
    o.spec.leaseSeconds = leaseSeconds;
  };

export const withTimeout =
  (timeoutSeconds: number): Mod<Capture> =>
  (o) => {
    o.spec.timeoutSeconds = timeoutSeconds;
  };

export const withMaxAttempts =
  (maxAttempts: number): Mod<Capture> =>
  (o) => {
    o.spec.maxAttempts = maxAttempts;
  };

export const withContainer =
  (container: string): Mod<Capture> =>
  (o) => {
    o.spec.container = container;
  };

export const withBackend =
  (type: CaptureBackendType, url?: string): Mod<Capture> =>
  (o) => {
    o.spec.backend = url === undefined ? { type } : { type, url };
  };

export const captureStatus =
  (status: Partial<CaptureStatus>): Mod<Capture> =>
  (o) => {
    o.status = { ...o.status, ...status };
  };

export const capturePhase = (phase: CapturePhase): Mod<Capture> => captureStatus({ phase });

export const withEpoch = (epoch: number): Mod<Capture> => captureStatus({ epoch });

/**
 * A claim held by `holder` (a pod or a name+UID). Token defaults to epoch + 1 and raises epoch to
 * it; times default to T0; leaseSeconds to the spec's. Sets phase Capturing.
 */
export const heldBy =
  (
    holder: Pod | PodRef,
    opts: Partial<Omit<CaptureClaim, 'holder'>> & { acquiredAt?: number; renewedAt?: number } = {},
  ): Mod<Capture> =>
  (o) => {
    o.status ??= {};
    const token = opts.token ?? (o.status.epoch ?? 0) + 1;
    const claim: CaptureClaim = {
      holder: 'metadata' in holder ? refOf(holder) : { ...holder },
      token,
      acquireTime: opts.acquireTime ?? at(opts.acquiredAt ?? 0),
      renewTime: opts.renewTime ?? at(opts.renewedAt ?? opts.acquiredAt ?? 0),
      leaseSeconds: opts.leaseSeconds ?? o.spec.leaseSeconds,
    };
    if (opts.jobStarts !== undefined) claim.jobStarts = opts.jobStarts;
    if (opts.jobStartTime !== undefined) claim.jobStartTime = opts.jobStartTime;
    if (opts.job) claim.job = opts.job;
    o.status.claim = claim;
    o.status.epoch = Math.max(o.status.epoch ?? 0, token);
    o.status.phase = 'Capturing';
  };

/** A durable result with the claim's token (or `token`); phase Captured, claim closed. */
export const captured =
  (ref: string, opts: { token?: number; from?: Pod | PodRef; atSeconds?: number } = {}): Mod<Capture> =>
  (o) => {
    o.status ??= {};
    const token = opts.token ?? o.status.claim?.token ?? o.status.epoch ?? 1;
    const from = opts.from ?? o.status.claim?.holder ?? { name: 'pod', uid: uidFor('Pod', 'pod') };
    o.status.result = {
      ref,
      token,
      capturedFrom: 'metadata' in from ? refOf(from) : { ...from },
      completionTime: at(opts.atSeconds ?? 0),
    };
    o.status.epoch = Math.max(o.status.epoch ?? 0, token);
    o.status.phase = 'Captured';
    delete o.status.claim;
  };

// ---------------- PodPool ----------------

export function podTemplate(
  labels: Record<string, string> = {},
  spec: Partial<PodSpec> = {},
): PodTemplateSpec {
  return {
    metadata: { labels: { ...labels } },
    spec: { containers: [{ name: 'main', image: DEFAULT_IMAGE }], ...spec },
  };
}

export function podPool(name: string, ...mods: Mod<PodPool>[]): PodPool {
  return build<PodPool>(
    {
      apiVersion: API_VERSION,
      kind: 'PodPool',
      metadata: meta('PodPool', name),
      spec: {
        template: podTemplate({ app: name }),
        minIdle: 2,
        maxPods: 50,
        releasePolicy: 'Recycle',
        drainSeconds: 0,
      },
    },
    mods,
  );
}

export const withTemplate =
  (template: PodTemplateSpec): Mod<PodPool> =>
  (o) => {
    o.spec.template = template;
  };

export const withMinIdle =
  (minIdle: number): Mod<PodPool> =>
  (o) => {
    o.spec.minIdle = minIdle;
  };

export const withMaxPods =
  (maxPods: number): Mod<PodPool> =>
  (o) => {
    o.spec.maxPods = maxPods;
  };

export const withReleasePolicy =
  (releasePolicy: ReleasePolicy): Mod<PodPool> =>
  (o) => {
    o.spec.releasePolicy = releasePolicy;
  };

export const withDrainSeconds =
  (drainSeconds: number): Mod<PodPool> =>
  (o) => {
    o.spec.drainSeconds = drainSeconds;
  };

export const withDisruptionBudget =
  (maxUnavailable = 0): Mod<PodPool> =>
  (o) => {
    o.spec.disruptionBudget = { maxUnavailable };
  };

/** Pods start from the fenced result of Capture `captureName` (spec.source), optionally naming the container. */
export const withSource =
  (captureName: string, container?: string): Mod<PodPool> =>
  (o) => {
    o.spec.source = container === undefined ? { captureName } : { captureName, container };
  };

export const poolStatus =
  (status: Partial<PodPoolStatus>): Mod<PodPool> =>
  (o) => {
    o.status = { ...o.status, ...status };
  };

// ---------------- PodClaim ----------------

export function podClaim(name: string, ...mods: Mod<PodClaim>[]): PodClaim {
  return build<PodClaim>(
    {
      apiVersion: API_VERSION,
      kind: 'PodClaim',
      metadata: meta('PodClaim', name),
      spec: { poolName: 'web' },
    },
    mods,
  );
}

export const forPool =
  (poolName: string): Mod<PodClaim> =>
  (o) => {
    o.spec.poolName = poolName;
  };

/** Bound to `pod` (a name or a Pod; a Pod's nodeName is used unless `node` is given); phase Bound. */
export const boundTo =
  (pod: string | Pod, node?: string): Mod<PodClaim> =>
  (o) => {
    o.spec.podName = typeof pod === 'string' ? pod : pod.metadata.name;
    const nodeName = node ?? (typeof pod === 'string' ? undefined : pod.spec.nodeName);
    if (nodeName) o.spec.nodeName = nodeName;
    o.status = { ...o.status, phase: 'Bound', boundTime: o.status?.boundTime ?? at(0) };
  };

/** Mid-migration: `sourcePod` is the pod being left; phase Migrating. */
export const migratingFrom =
  (sourcePod: string): Mod<PodClaim> =>
  (o) => {
    o.spec.sourcePod = sourcePod;
    o.status = { ...o.status, phase: 'Migrating' };
  };

/** Asks for a migration with the annotations DESIGN.md names. */
export const requestMigration =
  (reason = 'test', to?: string): Mod<PodClaim> =>
  (o) => {
    o.metadata.annotations = {
      ...o.metadata.annotations,
      [ANNOTATION_MIGRATE]: reason,
      ...(to ? { [ANNOTATION_MIGRATE_TO]: to } : {}),
    };
  };

/** Lost: podName and nodeName cleared, phase Lost. */
export const lost =
  (atSeconds = 0): Mod<PodClaim> =>
  (o) => {
    delete o.spec.podName;
    delete o.spec.nodeName;
    o.status = { ...o.status, phase: 'Lost', lostTime: at(atSeconds) };
  };

/** Labels and annotations the claim puts on its pod (spec.podMetadata). */
export const withPodMetadata =
  (labels: Record<string, string>, annotations: Record<string, string> = {}): Mod<PodClaim> =>
  (o) => {
    o.spec.podMetadata = { labels, annotations };
  };

export const withLostPolicy =
  (lostPolicy: LostPolicy): Mod<PodClaim> =>
  (o) => {
    o.spec.lostPolicy = lostPolicy;
  };

export const withReleaseFinalizer = (): Mod<PodClaim> => withFinalizers(FINALIZER_RELEASE);

export const claimStatus =
  (status: Partial<PodClaimStatus>): Mod<PodClaim> =>
  (o) => {
    o.status = { ...o.status, ...status };
  };

export const claimPhase = (phase: PodClaimPhase): Mod<PodClaim> => claimStatus({ phase });

/** A member of `set`: owned by it, labelled with the set name, template pool. */
export const inSet =
  (set: PodClaimSet): Mod<PodClaim> =>
  (o) => {
    ownedBy(set)(o);
    o.metadata.labels = {
      ...o.metadata.labels,
      ...set.spec.template.metadata?.labels,
      [LABEL_CLAIM_SET]: set.metadata.name,
    };
    o.spec.poolName = set.spec.template.spec.poolName;
  };

// ---------------- PodClaimSet ----------------

export function podClaimSet(name: string, ...mods: Mod<PodClaimSet>[]): PodClaimSet {
  return build<PodClaimSet>(
    {
      apiVersion: API_VERSION,
      kind: 'PodClaimSet',
      metadata: meta('PodClaimSet', name),
      spec: {
        replicas: 1,
        selector: { matchLabels: { [LABEL_CLAIM_SET]: name } },
        template: {
          metadata: { labels: { [LABEL_CLAIM_SET]: name } },
          spec: { poolName: 'web' },
        },
      },
    },
    mods,
  );
}

export const withReplicas =
  (replicas: number): Mod<PodClaimSet> =>
  (o) => {
    o.spec.replicas = replicas;
  };

export const setForPool =
  (poolName: string): Mod<PodClaimSet> =>
  (o) => {
    o.spec.template.spec.poolName = poolName;
  };

/** The template's podMetadata and lostPolicy, which every claim of the set gets. */
export const setClaimSpec =
  (podMetadata: PodMetadata, lostPolicy: LostPolicy = 'Rebind'): Mod<PodClaimSet> =>
  (o) => {
    o.spec.template.spec = { ...o.spec.template.spec, podMetadata, lostPolicy };
  };

export const setStatus =
  (status: Partial<PodClaimSetStatus>): Mod<PodClaimSet> =>
  (o) => {
    o.status = { ...o.status, ...status };
  };

// ---------------- Pod ----------------

export function pod(name: string, ...mods: Mod<Pod>[]): Pod {
  return build<Pod>(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('Pod', name),
      spec: { containers: [{ name: 'main', image: DEFAULT_IMAGE }] },
      status: { phase: 'Pending' },
    },
    mods,
  );
}

/**
 * Member of a pool (label `claimkit.dev/pool`), created from the template podPool(pool) has by
 * default (label `claimkit.dev/template-hash`); `ofTemplate` or `outdated` change that.
 */
export const inPool =
  (pool: string): Mod<Pod> =>
  (o) => {
    o.metadata.labels = {
      ...o.metadata.labels,
      [LABEL_POOL]: pool,
      [LABEL_TEMPLATE_HASH]: templateHash(podTemplate({ app: pool })),
    };
  };

/** Created from this template (its hash as label `claimkit.dev/template-hash`). */
export const ofTemplate =
  (template: PodTemplateSpec): Mod<Pod> =>
  (o) => {
    o.metadata.labels = { ...o.metadata.labels, [LABEL_TEMPLATE_HASH]: templateHash(template) };
  };

/** Created before pods carried a template hash: counts as outdated for every template. */
export const withoutTemplateHash: Mod<Pod> = (o) => {
  const { [LABEL_TEMPLATE_HASH]: _gone, ...labels } = o.metadata.labels ?? {};
  o.metadata.labels = labels;
};

export const withState =
  (state: PodState): Mod<Pod> =>
  (o) => {
    o.metadata.labels = { ...o.metadata.labels, [LABEL_STATE]: state };
  };

/** Idle: state label Idle, no claimed-by label or annotation. */
export const idle = (): Mod<Pod> => (o) => {
  withState('Idle')(o);
  delete o.metadata.labels?.[LABEL_CLAIMED_BY];
  delete o.metadata.annotations?.[ANNOTATION_CLAIMED_BY_UID];
};

/** Bound to a claim (a name or the PodClaim): state Bound, claimed-by label and UID annotation. */
export const claimedBy =
  (claim: string | PodClaim): Mod<Pod> =>
  (o) => {
    const name = typeof claim === 'string' ? claim : claim.metadata.name;
    const uid =
      typeof claim === 'string'
        ? uidFor('PodClaim', claim)
        : (claim.metadata.uid ?? uidFor('PodClaim', name));
    withState('Bound')(o);
    o.metadata.labels = { ...o.metadata.labels, [LABEL_CLAIMED_BY]: name };
    o.metadata.annotations = { ...o.metadata.annotations, [ANNOTATION_CLAIMED_BY_UID]: uid };
  };

export const draining = (): Mod<Pod> => withState('Draining');

export const onNode =
  (nodeName: string): Mod<Pod> =>
  (o) => {
    o.spec.nodeName = nodeName;
  };

export const podStatus =
  (status: Partial<PodStatus>): Mod<Pod> =>
  (o) => {
    o.status = { ...o.status, ...status };
  };

export const podPhase = (phase: PodPhase): Mod<Pod> => podStatus({ phase });

function setReady(o: Pod, ready: boolean): void {
  o.status ??= {};
  const conditions = (o.status.conditions ?? []).filter((c) => c.type !== 'Ready');
  conditions.push({ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at(0) });
  o.status.conditions = conditions;
}

/** Running and Ready. */
export const ready = (): Mod<Pod> => (o) => {
  o.status = { ...o.status, phase: 'Running' };
  setReady(o, true);
};

/** Running, not Ready. */
export const running = (): Mod<Pod> => (o) => {
  o.status = { ...o.status, phase: 'Running' };
  setReady(o, false);
};

export const notReady = (): Mod<Pod> => (o) => {
  setReady(o, false);
};

/** Pending with PodScheduled=False/Unschedulable: the scheduler found no node for it. */
export const unschedulable = (): Mod<Pod> => (o) => {
  delete o.spec.nodeName;
  o.status = {
    ...o.status,
    phase: 'Pending',
    conditions: [
      ...(o.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled' && c.type !== 'Ready'),
      { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: at(0) },
    ],
  };
};

export const succeeded = (): Mod<Pod> => podPhase('Succeeded');
export const failed = (): Mod<Pod> => podPhase('Failed');

export const withContainers =
  (...names: string[]): Mod<Pod> =>
  (o) => {
    o.spec.containers = names.map((name) => ({ name, image: DEFAULT_IMAGE }));
  };

// ---------------- built-ins used by tests ----------------

/** A cluster-scoped Node, Ready and schedulable. */
export function node(name: string, ...mods: Mod<Node>[]): Node {
  const m = meta('Node', name);
  return build<Node>(
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { ...m, namespace: '', uid: uidFor('Node', name, '') },
      spec: {},
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at(0) }] },
    },
    mods,
  );
}

/** Cordoned: `kubectl cordon` sets spec.unschedulable. */
export const cordoned = (): Mod<Node> => (o) => {
  o.spec.unschedulable = true;
};

/** The node's Ready condition is False (or Unknown: the kubelet stopped reporting). */
export const nodeNotReady =
  (status: 'False' | 'Unknown' = 'Unknown'): Mod<Node> =>
  (o) => {
    o.status = { conditions: [{ type: 'Ready', status, lastTransitionTime: at(0) }] };
  };

export function configMap(
  name: string,
  data: Record<string, string> = {},
  ...mods: Mod<ConfigMap>[]
): ConfigMap {
  return build<ConfigMap>(
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('ConfigMap', name), data: { ...data } },
    mods,
  );
}

export function lease(name: string, holderIdentity?: string, ...mods: Mod<Lease>[]): Lease {
  return build<Lease>(
    {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: meta('Lease', name),
      spec: holderIdentity
        ? {
            holderIdentity,
            leaseDurationSeconds: 15,
            acquireTime: at(0),
            renewTime: at(0),
            leaseTransitions: 0,
          }
        : {},
    },
    mods,
  );
}

/** Strips what the server assigns (uid, resourceVersion, creationTimestamp), for creating through a client. */
export function forCreate<T extends KubeObject>(o: T): T {
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, generation: _g, ...metadata } = o.metadata;
  return { ...o, metadata } as T;
}

// ---------------- complete objects: every field set ----------------

/** A Capture with every spec and status field set (for schema and webhook tests). */
export function fullCapture(name = 'full'): Capture {
  return capture(
    name,
    withSelector({
      matchLabels: { app: 'db' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }],
    }),
    withContainer('main'),
    withLease(60),
    withTimeout(120),
    withMaxAttempts(5),
    withBackend('Http', 'http://{nodeName}:8750/v1/captures'),
    withEpoch(6),
    heldBy(
      { name: 'db-1', uid: uidFor('Pod', 'db-1') },
      { jobStarts: 1, jobStartTime: at(2), job: { id: 'job-7', startTime: at(2) }, acquiredAt: 1 },
    ),
    captureStatus({
      result: {
        ref: 'registry.example/captures/db:6',
        token: 6,
        capturedFrom: { name: 'db-0', uid: uidFor('Pod', 'db-0') },
        completionTime: at(0),
      },
      attempts: 1,
      takeovers: 1,
      lastError: 'previous holder died',
      observedGeneration: 1,
    }),
    withCondition('Ready', 'True', {
      reason: 'Captured',
      message: 'captured by db-0',
      observedGeneration: 1,
    }),
  );
}

export function fullPodPool(name = 'web'): PodPool {
  return podPool(
    name,
    withTemplate({
      metadata: { labels: { app: name }, annotations: { note: 'x' } },
      spec: { containers: [{ name: 'main', image: DEFAULT_IMAGE }], nodeName: 'n1' },
    }),
    withMinIdle(1),
    withMaxPods(10),
    withReleasePolicy('Delete'),
    withDrainSeconds(5),
    withDisruptionBudget(1),
    withSource('snapshot', 'main'),
    poolStatus({
      total: 3,
      idle: 1,
      bound: 1,
      draining: 1,
      updated: 2,
      outdated: 1,
      templateHash: '0123456789',
      selector: `claimkit.dev/pool=${name}`,
      observedGeneration: 1,
    }),
    withCondition('Ready', 'True', { reason: 'Scaled', message: 'pool at size', observedGeneration: 1 }),
  );
}

export function fullPodClaim(name = 'claim'): PodClaim {
  return podClaim(
    name,
    forPool('web'),
    boundTo('web-2', 'n2'),
    migratingFrom('web-1'),
    withPodMetadata({ team: 'a' }, { 'example.com/owner': 'alice' }),
    withLostPolicy('Fail'),
    claimStatus({ boundTime: at(1), lostTime: at(0), migrations: 1, observedGeneration: 2 }),
    withCondition('Bound', 'True', { reason: 'Bound', message: 'bound to web-2', observedGeneration: 1 }),
  );
}

export function fullPodClaimSet(name = 'set'): PodClaimSet {
  return podClaimSet(
    name,
    withReplicas(3),
    withSelector({
      matchLabels: { [LABEL_CLAIM_SET]: name },
      matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['z'] }],
    }),
    setForPool('web'),
    setClaimSpec({ labels: { team: 'a' }, annotations: { 'example.com/owner': 'alice' } }, 'Fail'),
    setStatus({
      replicas: 3,
      boundReplicas: 1,
      pending: 1,
      migrating: 1,
      lost: 0,
      labelSelector: `${LABEL_CLAIM_SET}=${name}`,
      observedGeneration: 1,
    }),
    withCondition('Ready', 'False', { reason: 'Binding', message: '1 of 3 bound', observedGeneration: 1 }),
  );
}
