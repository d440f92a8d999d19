// Leader election on a coordination.k8s.io/v1 Lease, as a pure decision plus one step over the
// Client port (the runtime's loop calls `leaseStep` every retry period). Leadership is for
// efficiency only: every claim write stays fenced on its own, so two leaders at once are safe.
//
// A lease is held while `renewTime + leaseDurationSeconds > now`; an empty holder (released) or an
// expired lease is acquired at once. Every write is an update carrying the resourceVersion that was
// read, so of two candidates racing for the same lease exactly one wins (the other gets Conflict).
//
// A holder running in a pod records who it is on the Lease (annotations: its pod, the pod's UID,
// the container and that container's incarnation). A candidate that finds a live lease judges the
// holder as a Capture judges its holder (`classifyHolder`, then `classifyHolderContainer`) after a
// live read of the holder pod, and takes over at once when the holder is dead; unknown liveness (a
// failed read, nothing recorded) waits for the expiry as before.
import { ApiError, isApiError } from '../api/errors.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Reader, Writer } from '../api/ports.ts';
import type { Lease, Pod } from '../api/types.ts';
import {
  type ContainerLiveness,
  classifyHolder,
  classifyHolderContainer,
  type HolderLookup,
  type Liveness,
} from '../capture/holder-liveness.ts';

/** Lease annotations naming the holder's pod; trusted only while `holder-identity` is `spec.holderIdentity`. */
const LEASE_HOLDER_IDENTITY = 'claimkit.dev/holder-identity';
/** `<namespace>/<name>` of the holder's pod. */
const LEASE_HOLDER_POD = 'claimkit.dev/holder-pod';
export const LEASE_HOLDER_UID = 'claimkit.dev/holder-uid';
/** The container that runs the holder, and (when the holder saw them in its pod's status) its incarnation. */
const LEASE_HOLDER_CONTAINER = 'claimkit.dev/holder-container';
const LEASE_HOLDER_CONTAINER_ID = 'claimkit.dev/holder-container-id';
const LEASE_HOLDER_RESTART_COUNT = 'claimkit.dev/holder-restart-count';
const HOLDER_ANNOTATIONS = [
  LEASE_HOLDER_IDENTITY,
  LEASE_HOLDER_POD,
  LEASE_HOLDER_UID,
  LEASE_HOLDER_CONTAINER,
  LEASE_HOLDER_CONTAINER_ID,
  LEASE_HOLDER_RESTART_COUNT,
];

/** The pod (and container incarnation) a lease holder runs in. */
export interface LeaseHolderPod {
  namespace: string;
  name: string;
  uid: string;
  container?: string;
  containerID?: string;
  restartCount?: number;
}

export interface LeaderLeaseParams {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  /** Where this candidate runs; recorded on the lease when it holds it. Unset (outside a pod): nothing recorded. */
  self?: LeaseHolderPod;
}

/** Why a holder's live lease was taken over (`LeaseExpired`: it was not live any more). */
export type TakeoverReason =
  | 'LeaseExpired'
  | Extract<Liveness, { state: 'dead' }>['reason']
  | Extract<ContainerLiveness, { state: 'dead' }>['reason'];

export type LeaseHolderLiveness = Liveness | ContainerLiveness;

export type LeaseDecision =
  /** No Lease object yet: create it, holding it. */
  | { action: 'create'; lease: Lease }
  /** The lease is empty (released, never held): take it. */
  | { action: 'acquire'; lease: Lease }
  /** Another holder let the lease expire, or its pod is dead: take it over. */
  | { action: 'takeover'; lease: Lease; previousHolder: string; reason: TakeoverReason }
  /** We hold it: renew. */
  | { action: 'renew'; lease: Lease }
  /** Someone else holds a live lease: wait (until `expiresAt` at the earliest). */
  | { action: 'wait'; holder: string; expiresAt: number };

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits (the server rejects fewer). */
export function toMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** When the lease expires (ms), or undefined when it is not held (no holder, no renewTime). */
function leaseExpiry(lease: Lease): number | undefined {
  if (!lease.spec.holderIdentity) return undefined;
  const renew = lease.spec.renewTime ? Date.parse(lease.spec.renewTime) : Number.NaN;
  if (Number.isNaN(renew)) return undefined;
  return renew + (lease.spec.leaseDurationSeconds ?? 0) * 1000;
}

function held(lease: Lease, now: number): boolean {
  const exp = leaseExpiry(lease);
  return exp !== undefined && exp > now;
}

/** The holder of a live lease, else undefined. */
export function currentLeader(lease: Lease | undefined, now: number): string | undefined {
  return lease && held(lease, now) ? lease.spec.holderIdentity : undefined;
}

/** The annotations that record `self` as the holder `identity`. */
function holderAnnotations(identity: string, self: LeaseHolderPod): Record<string, string> {
  const a: Record<string, string> = {
    [LEASE_HOLDER_IDENTITY]: identity,
    [LEASE_HOLDER_POD]: `${self.namespace}/${self.name}`,
    [LEASE_HOLDER_UID]: self.uid,
  };
  if (self.container) {
    a[LEASE_HOLDER_CONTAINER] = self.container;
    if (self.containerID) a[LEASE_HOLDER_CONTAINER_ID] = self.containerID;
    if (self.restartCount !== undefined) a[LEASE_HOLDER_RESTART_COUNT] = String(self.restartCount);
  }
  return a;
}

/**
 * The lease's metadata with the holder annotations of `p` (or none, outside a pod: a stale record of
 * an earlier holder must not stay beside a new holderIdentity). Unchanged when nothing differs.
 */
function withHolder(
  meta: Lease['metadata'],
  p: Pick<LeaderLeaseParams, 'identity' | 'self'>,
): Lease['metadata'] {
  const rest = Object.fromEntries(
    Object.entries(meta.annotations ?? {}).filter(([k]) => !HOLDER_ANNOTATIONS.includes(k)),
  );
  const next = { ...rest, ...(p.self ? holderAnnotations(p.identity, p.self) : {}) };
  const before = meta.annotations ?? {};
  const same =
    Object.keys(next).length === Object.keys(before).length &&
    Object.entries(next).every(([k, v]) => before[k] === v);
  if (same) return meta;
  const { annotations: _, ...m } = meta;
  return Object.keys(next).length > 0 ? { ...m, annotations: next } : m;
}

/**
 * The holder pod the lease records for its current holder, or undefined: no record (outside a pod,
 * an older version), or a record written for another identity than `spec.holderIdentity`.
 */
export function leaseHolderPod(lease: Lease | undefined): LeaseHolderPod | undefined {
  const a = lease?.metadata.annotations;
  const holder = lease?.spec.holderIdentity;
  if (!a || !holder || a[LEASE_HOLDER_IDENTITY] !== holder) return undefined;
  const pod = a[LEASE_HOLDER_POD] ?? '';
  const slash = pod.indexOf('/');
  const uid = a[LEASE_HOLDER_UID];
  if (slash <= 0 || slash === pod.length - 1 || !uid) return undefined;
  const out: LeaseHolderPod = { namespace: pod.slice(0, slash), name: pod.slice(slash + 1), uid };
  const container = a[LEASE_HOLDER_CONTAINER];
  if (container) {
    out.container = container;
    const id = a[LEASE_HOLDER_CONTAINER_ID];
    if (id) out.containerID = id;
    const rc = Number(a[LEASE_HOLDER_RESTART_COUNT] ?? Number.NaN);
    if (Number.isInteger(rc) && rc >= 0) out.restartCount = rc;
  }
  return out;
}

/**
 * The holder's liveness from a live lookup of its pod: the pod as a Capture judges its holder (name
 * and UID, deleting, finished), then whether the recorded container incarnation still runs.
 */
function classifyLeaseHolder(holder: LeaseHolderPod, lookup: HolderLookup): LeaseHolderLiveness {
  const pod = classifyHolder({ name: holder.name, uid: holder.uid }, lookup);
  if (pod.state !== 'alive' || !holder.container || !('found' in lookup) || !lookup.found) return pod;
  return classifyHolderContainer(lookup.pod, {
    name: holder.container,
    ...(holder.containerID ? { containerID: holder.containerID } : {}),
    ...(holder.restartCount !== undefined ? { restartCount: holder.restartCount } : {}),
  });
}

/**
 * The incarnation of `container` this process runs as, from its own pod as read: the running
 * container's ID and restartCount, trusted only when it started at or after `notBeforeMs` (about
 * when this process started; a status from before a restart still shows the previous container).
 */
export function ownContainer(
  pod: Pod | undefined,
  self: Pick<LeaseHolderPod, 'uid' | 'container'>,
  notBeforeMs: number,
): Pick<LeaseHolderPod, 'containerID' | 'restartCount'> {
  if (!pod || !self.container || pod.metadata.uid !== self.uid) return {};
  const s = pod.status?.containerStatuses?.find((c) => c.name === self.container);
  const started = Date.parse(s?.state?.running?.startedAt ?? '');
  if (!s?.containerID || Number.isNaN(started) || started < notBeforeMs) return {};
  return {
    containerID: s.containerID,
    ...(s.restartCount !== undefined ? { restartCount: s.restartCount } : {}),
  };
}

/**
 * What to do given the lease as read (undefined: it does not exist) and, for a live lease held by
 * another, the holder's liveness: only `dead` takes it over before expiry.
 */
export function decideLease(
  current: Lease | undefined,
  p: LeaderLeaseParams,
  now: number,
  holderLiveness?: LeaseHolderLiveness,
): LeaseDecision {
  const t = toMicroTime(now);
  if (!current) {
    return {
      action: 'create',
      lease: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: withHolder({ namespace: p.namespace, name: p.name }, p),
        spec: {
          holderIdentity: p.identity,
          leaseDurationSeconds: p.leaseDurationSeconds,
          acquireTime: t,
          renewTime: t,
          leaseTransitions: 0,
        },
      },
    };
  }
  const holder = current.spec.holderIdentity ?? '';
  const live = held(current, now);
  if (holder === p.identity && live) {
    return {
      action: 'renew',
      lease: {
        ...current,
        metadata: withHolder(current.metadata, p),
        spec: { ...current.spec, renewTime: t, leaseDurationSeconds: p.leaseDurationSeconds },
      },
    };
  }
  const holderDead = holderLiveness?.state === 'dead';
  if (holder !== '' && holder !== p.identity && live && !holderDead) {
    return { action: 'wait', holder, expiresAt: leaseExpiry(current)! };
  }
  // Empty, expired, or our own expired lease: (re)acquire with a fresh acquireTime.
  const transitions = (current.spec.leaseTransitions ?? 0) + (holder !== p.identity ? 1 : 0);
  const lease: Lease = {
    ...current,
    metadata: withHolder(current.metadata, p),
    spec: {
      ...current.spec,
      holderIdentity: p.identity,
      leaseDurationSeconds: p.leaseDurationSeconds,
      acquireTime: t,
      renewTime: t,
      leaseTransitions: transitions,
    },
  };
  if (holder === '' || holder === p.identity) return { action: 'acquire', lease };
  const reason: TakeoverReason =
    live && holderLiveness?.state === 'dead' ? holderLiveness.reason : 'LeaseExpired';
  return { action: 'takeover', lease, previousHolder: holder, reason };
}

/** The lease released by `identity` (empty holder, so others acquire at once), or undefined when not ours. */
function releasedLease(current: Lease, identity: string, now: number): Lease | undefined {
  if (current.spec.holderIdentity !== identity) return undefined;
  return {
    ...current,
    metadata: withHolder(current.metadata, { identity }),
    spec: { ...current.spec, holderIdentity: '', renewTime: toMicroTime(now), leaseDurationSeconds: 1 },
  };
}

export interface LeaseStepResult {
  /** leading: we hold the lease now; following: someone else does; unknown: the step failed (keep the last state until the renew deadline). */
  outcome: 'leading' | 'following' | 'unknown';
  decision?: LeaseDecision;
  /** The holder of the lease as far as this step knows. */
  holder?: string;
  lease?: Lease;
  error?: ApiError;
  /** The holder's liveness, when the lease was held by another that recorded its pod. */
  liveness?: LeaseHolderLiveness;
}

function asApiError(e: unknown): ApiError {
  return e instanceof ApiError ? e : new ApiError('Unavailable', String((e as Error)?.message ?? e));
}

/** One read-decide-write round. Never throws: failures come back as outcome `unknown`. */
export async function leaseStep(
  client: Reader & Writer,
  p: LeaderLeaseParams,
  now: number,
): Promise<LeaseStepResult> {
  const key: ObjectKey = { namespace: p.namespace, name: p.name };
  let current: Lease | undefined;
  try {
    current = await client.get('Lease', key);
  } catch (e) {
    if (!isApiError(e, 'NotFound')) return { outcome: 'unknown', error: asApiError(e) };
  }
  let decision = decideLease(current, p, now);
  let liveness: LeaseHolderLiveness | undefined;
  const holderPod = decision.action === 'wait' ? leaseHolderPod(current) : undefined;
  if (holderPod) {
    // A live read, after the lease read: the pod as it is now, at least as new as what the holder
    // saw when it wrote the lease (a watch cache may still show an older container).
    liveness = classifyLeaseHolder(holderPod, await lookupPod(client, holderPod));
    if (liveness.state === 'dead') decision = decideLease(current, p, now, liveness);
  }
  if (decision.action === 'wait') {
    return {
      outcome: 'following',
      decision,
      holder: decision.holder,
      ...(current ? { lease: current } : {}),
      ...(liveness ? { liveness } : {}),
    };
  }
  try {
    const lease =
      decision.action === 'create'
        ? await client.create(decision.lease)
        : await client.update(decision.lease); // fenced on the resourceVersion read above
    return { outcome: 'leading', decision, holder: p.identity, lease, ...(liveness ? { liveness } : {}) };
  } catch (e) {
    // Conflict / AlreadyExists: another candidate wrote first; the next round reads who holds it.
    return { outcome: 'unknown', decision, error: asApiError(e), ...(liveness ? { liveness } : {}) };
  }
}

/** The holder pod by a live read: NotFound is definite, any other failure is unknown liveness. */
async function lookupPod(client: Reader, holder: LeaseHolderPod): Promise<HolderLookup> {
  try {
    return { found: true, pod: await client.get('Pod', { namespace: holder.namespace, name: holder.name }) };
  } catch (e) {
    if (isApiError(e, 'NotFound')) return { found: false };
    return { error: asApiError(e).message };
  }
}

/** Releases the lease if `identity` holds it. Never throws; true when released. */
export async function releaseLeaderLease(
  client: Reader & Writer,
  p: Pick<LeaderLeaseParams, 'namespace' | 'name' | 'identity'>,
  now: number,
): Promise<boolean> {
  try {
    const current = await client.get('Lease', { namespace: p.namespace, name: p.name });
    const next = releasedLease(current, p.identity, now);
    if (!next) return false;
    await client.update(next);
    return true;
  } catch {
    return false;
  }
}
