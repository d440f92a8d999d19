// Leader election on a coordination.k8s.io/v1 Lease, as a pure decision plus one step over the
// Client port (the runtime's loop calls `leaseStep` every retry period). Leadership is for
// efficiency only: every claim write stays fenced on its own, so two leaders at once are safe.
//
// A lease is held while `renewTime + leaseDurationSeconds > now`; an empty holder (released) or an
// expired lease is acquired at once. Every write is an update carrying the resourceVersion that was
// read, so of two candidates racing for the same lease exactly one wins (the other gets Conflict).
import { ApiError, isApiError } from '../api/errors.ts';
import type { ObjectKey } from '../api/meta.ts';
import type { Reader, Writer } from '../api/ports.ts';
import type { Lease } from '../api/types.ts';

export interface LeaderLeaseParams {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
}

export type LeaseDecision =
  /** No Lease object yet: create it, holding it. */
  | { action: 'create'; lease: Lease }
  /** The lease is empty (released, never held): take it. */
  | { action: 'acquire'; lease: Lease }
  /** Another holder let the lease expire: take it over. */
  | { action: 'takeover'; lease: Lease; previousHolder: string }
  /** We hold it: renew. */
  | { action: 'renew'; lease: Lease }
  /** Someone else holds a live lease: wait (until `expiresAt` at the earliest). */
  | { action: 'wait'; holder: string; expiresAt: number };

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits (the server rejects fewer). */
export function toMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** When the lease expires (ms), or undefined when it is not held (no holder, no renewTime). */
export function leaseExpiry(lease: Lease): number | undefined {
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

/** What to do given the lease as read (undefined: it does not exist). */
export function decideLease(current: Lease | undefined, p: LeaderLeaseParams, now: number): LeaseDecision {
  const t = toMicroTime(now);
  if (!current) {
    return {
      action: 'create',
      lease: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { namespace: p.namespace, name: p.name },
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
        spec: { ...current.spec, renewTime: t, leaseDurationSeconds: p.leaseDurationSeconds },
      },
    };
  }
  if (holder !== '' && holder !== p.identity && live) {
    return { action: 'wait', holder, expiresAt: leaseExpiry(current)! };
  }
  // Empty, expired, or our own expired lease: (re)acquire with a fresh acquireTime.
  const transitions = (current.spec.leaseTransitions ?? 0) + (holder !== p.identity ? 1 : 0);
  const lease: Lease = {
    ...current,
    spec: {
      ...current.spec,
      holderIdentity: p.identity,
      leaseDurationSeconds: p.leaseDurationSeconds,
      acquireTime: t,
      renewTime: t,
      leaseTransitions: transitions,
    },
  };
  return holder !== '' && holder !== p.identity
    ? { action: 'takeover', lease, previousHolder: holder }
    : { action: 'acquire', lease };
}

/** The lease released by `identity` (empty holder, so others acquire at once), or undefined when not ours. */
export function releasedLease(current: Lease, identity: string, now: number): Lease | undefined {
  if (current.spec.holderIdentity !== identity) return undefined;
  return {
    ...current,
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
  const decision = decideLease(current, p, now);
  if (decision.action === 'wait') {
    return {
      outcome: 'following',
      decision,
      holder: decision.holder,
      ...(current ? { lease: current } : {}),
    };
  }
  try {
    const lease =
      decision.action === 'create'
        ? await client.create(decision.lease)
        : await client.update(decision.lease); // fenced on the resourceVersion read above
    return { outcome: 'leading', decision, holder: p.identity, lease };
  } catch (e) {
    // Conflict / AlreadyExists: another candidate wrote first; the next round reads who holds it.
    return { outcome: 'unknown', decision, error: asApiError(e) };
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
