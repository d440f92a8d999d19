// The claim call (issue 43): an application claims a pod of a pool and gets, in one await, the claim,
// its pod and where to reach it. It creates a PodClaim, watches it (never polls) until it is Bound
// with an address, and reads the pod. When the wait ends without a pod (the timeout, the caller's
// AbortSignal) it rejects with the claim's own reason for waiting (condition Bound: PoolAtMaxPods,
// NoReadyPod, PoolNotFound, ...) and deletes the claim unless told to keep it. The result releases
// the claim (release(), or `await using`) and says when the pod is lost (onLost). Over core's ports,
// so the in-memory model and a real API server (this package's client) run the same code; claim.ts
// gives it the process's timers.
import {
  type ClaimAddress,
  type Client,
  type ContainerPortSpec,
  FINALIZER_RELEASE,
  findCondition,
  getOrUndefined,
  isApiError,
  type Pod,
  type PodClaim,
  podNameOf,
  type Timers,
  type Watcher,
} from '@claimkit/core';

/** The claim's condition saying whether it is bound and, when not, why (core's bound-condition.ts). */
const CONDITION_BOUND = 'Bound';

export interface ClaimPodOptions {
  /** The PodPool to claim from. */
  pool: string;
  /** The claim's namespace (the pool's). Default `default`. */
  namespace?: string;
  /** The claim's name; default `<pool>-` + 5 random characters (generateName). */
  name?: string;
  /** Labels and annotations put on the pod by the bind (spec.podMetadata). */
  podMetadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  /** What happens when the pod is lost: `Rebind` (default) binds another, `Fail` keeps the claim Lost. */
  lostPolicy?: 'Rebind' | 'Fail';
  /** How long to wait for a pod (ms). Default 60 s. */
  timeoutMs?: number;
  /** Ends the wait early (the claim is deleted unless `keep`). */
  signal?: AbortSignal;
  /** Keep the claim when the wait ends without a pod (it binds later; the caller owns it). */
  keep?: boolean;
}

/** Why a claim call ended without a pod. */
export type ClaimWaitReason =
  /** The claim's own reason for waiting when the time ran out (condition Bound), or `Timeout`. */
  | 'PoolAtMaxPods'
  | 'NoReadyPod'
  | 'PoolNotFound'
  | 'LostPolicyFail'
  | 'Timeout'
  /** The caller's AbortSignal. */
  | 'Aborted'
  /** The API server refused the claim (RBAC, validation, admission): `cause` is its ApiError. */
  | 'Refused'
  /** The claim was deleted (by someone else) while it waited, or did not exist. */
  | 'Deleted';

export class ClaimWaitError extends Error {
  override readonly name = 'ClaimWaitError';
  readonly reason: ClaimWaitReason;
  /** The claim as last seen (absent when it was never created). */
  readonly claim: PodClaim | undefined;
  /** Whether the claim was left in place (`keep`), or deleted. */
  readonly kept: boolean;

  constructor(
    reason: ClaimWaitReason,
    message: string,
    opts: { claim?: PodClaim; kept?: boolean; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.reason = reason;
    this.claim = opts.claim;
    this.kept = opts.kept ?? false;
  }
}

/** A bound claim: its pod and where to reach it; released by release() or `await using`. */
export interface ClaimedPod extends AsyncDisposable {
  claim: PodClaim;
  pod: Pod;
  address: ClaimAddress;
  /** The container ports of the pool's template (from the address). */
  ports: ContainerPortSpec[];
  /**
   * Calls `handler` once when the claim loses its pod (phase Lost, another pod, or the claim gone);
   * returns a function that stops watching. Watches the claim, never polls.
   */
  onLost(handler: (claim: PodClaim | undefined) => void): () => void;
  /** Deletes the claim (its finalizer releases the pod); resolves once the API server accepted it. */
  release(): Promise<void>;
}

export const CLAIM_POD_DEFAULT_TIMEOUT_MS = 60_000;

/** A claim is served once it is Bound with a pod and an address. */
function isServed(c: PodClaim): boolean {
  return c.status?.phase === 'Bound' && !!podNameOf(c) && !!c.status.address?.podIPs?.length;
}

/** The reason the claim says it waits (condition Bound, False), if any. */
function waitingReason(c: PodClaim | undefined): ClaimWaitReason | undefined {
  const bound = findCondition(c?.status?.conditions, CONDITION_BOUND);
  if (bound?.status !== 'False') return undefined;
  const r = bound.reason as ClaimWaitReason;
  return ['PoolAtMaxPods', 'NoReadyPod', 'PoolNotFound', 'LostPolicyFail'].includes(r) ? r : undefined;
}

const keyOfClaim = (c: PodClaim) => ({ namespace: c.metadata.namespace ?? '', name: c.metadata.name });

/**
 * Watches one claim (by name) from `resourceVersion` until `done` returns true or stop() is called;
 * a watch that ends is started again from the last version seen (a 410 reads the claim afresh).
 */
function watchClaim(
  client: Client & Watcher,
  timers: Timers,
  key: { namespace: string; name: string },
  resourceVersion: string | undefined,
  onClaim: (c: PodClaim | undefined) => void,
): () => void {
  let stopped = false;
  let stopWatch = () => {};
  let rv = resourceVersion;
  let retry: unknown;
  const start = () => {
    if (stopped) return;
    stopWatch = client.watch(
      'PodClaim',
      {
        namespace: key.namespace,
        fieldSelector: { 'metadata.name': key.name },
        ...(rv ? { resourceVersion: rv } : {}),
        allowWatchBookmarks: true,
      },
      {
        onEvent: (e) => {
          rv = e.object.metadata.resourceVersion ?? rv;
          onClaim(e.type === 'DELETED' ? undefined : e.object);
        },
        onBookmark: (v) => {
          rv = v;
        },
        onClose: (error) => {
          if (stopped) return;
          if (error && isApiError(error, 'Gone')) {
            // Too old to resume: read the claim now and watch from there.
            rv = undefined;
            void getOrUndefined(client.get('PodClaim', key)).then((c) => {
              if (stopped) return;
              rv = c?.metadata.resourceVersion;
              onClaim(c);
              start();
            });
            return;
          }
          retry = timers.setTimeout(start, error ? 1000 : 0);
        },
      },
    );
  };
  start();
  return () => {
    stopped = true;
    if (retry !== undefined) timers.clearTimeout(retry);
    stopWatch();
  };
}

/**
 * Claims a pod of `opts.pool` and resolves once the claim is Bound, with its pod and address. See
 * the file's header for what happens when it is not.
 */
export async function claimPod(
  client: Client & Watcher,
  timers: Timers,
  opts: ClaimPodOptions,
): Promise<ClaimedPod> {
  const namespace = opts.namespace ?? 'default';
  const timeoutMs = opts.timeoutMs ?? CLAIM_POD_DEFAULT_TIMEOUT_MS;
  if (opts.signal?.aborted)
    throw new ClaimWaitError('Aborted', 'the claim call was aborted before it started');
  let created: PodClaim;
  try {
    created = await client.create({
      apiVersion: 'claimkit.dev/v1alpha1',
      kind: 'PodClaim',
      metadata: {
        namespace,
        ...(opts.name ? { name: opts.name } : { generateName: `${opts.pool}-` }),
        // Created with the controller's release finalizer, so its bind is two writes (pod, status).
        finalizers: [FINALIZER_RELEASE],
      },
      spec: {
        poolName: opts.pool,
        ...(opts.podMetadata ? { podMetadata: opts.podMetadata } : {}),
        ...(opts.lostPolicy ? { lostPolicy: opts.lostPolicy } : {}),
      },
    } as PodClaim);
  } catch (e) {
    const why = isApiError(e) ? `${e.reason} (${e.code}): ${e.message}` : String(e);
    throw new ClaimWaitError('Refused', `the API server refused the PodClaim: ${why}`, { cause: e });
  }
  try {
    return await waitForClaim(client, timers, keyOfClaim(created), {
      timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      seen: created,
      pool: opts.pool,
    });
  } catch (e) {
    if (!(e instanceof ClaimWaitError) || e.reason === 'Deleted') throw e;
    const key = keyOfClaim(created);
    const kept = Boolean(opts.keep);
    if (!kept) await client.delete('PodClaim', key).catch(() => undefined);
    throw new ClaimWaitError(e.reason, `${e.message}; it was ${kept ? 'kept' : 'deleted'}`, {
      ...(e.claim ? { claim: e.claim } : {}),
      kept,
    });
  }
}

export interface WaitForClaimOptions {
  /** How long to wait (ms). Default 60 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The claim as the caller has it (its resourceVersion is where the watch starts). */
  seen?: PodClaim;
  /** The pool, for the message (default: the claim's). */
  pool?: string;
}

/**
 * Waits (a watch, never polling) until the claim `key` is Bound with an address, and resolves with
 * its pod; rejects with ClaimWaitError when the time runs out (the claim's own reason), the signal
 * aborts, the claim is Lost for good (lostPolicy Fail) or deleted. Never deletes the claim.
 */
export async function waitForClaim(
  client: Client & Watcher,
  timers: Timers,
  key: { namespace: string; name: string },
  opts: WaitForClaimOptions = {},
): Promise<ClaimedPod> {
  const timeoutMs = opts.timeoutMs ?? CLAIM_POD_DEFAULT_TIMEOUT_MS;
  let last: PodClaim | undefined = opts.seen ?? (await getOrUndefined(client.get('PodClaim', key)));
  if (!last) throw new ClaimWaitError('Deleted', `PodClaim ${key.namespace}/${key.name} does not exist`);
  const start = last;
  const served = await new Promise<PodClaim | ClaimWaitReason>((resolve) => {
    let settled = false;
    const finish = (r: PodClaim | ClaimWaitReason) => {
      if (settled) return;
      settled = true;
      stop();
      timers.clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const onClaim = (c: PodClaim | undefined) => {
      // Deleted while it waited (by someone else): nothing left to wait for.
      if (!c) return finish('Deleted');
      last = c;
      if (isServed(c)) finish(c);
      // A lostPolicy Fail claim that is Lost never binds again: waiting longer would not help.
      else if (waitingReason(c) === 'LostPolicyFail') finish('LostPolicyFail');
    };
    const onAbort = () => finish('Aborted');
    const timer = timers.setTimeout(() => finish(waitingReason(last) ?? 'Timeout'), timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const stop = watchClaim(client, timers, key, start.metadata.resourceVersion, onClaim);
    if (opts.signal?.aborted) finish('Aborted');
    else if (isServed(start)) finish(start);
  });
  if (typeof served !== 'string') return boundPod(client, timers, served);
  const pool = opts.pool ?? start.spec.poolName;
  const said = findCondition(last?.status?.conditions, CONDITION_BOUND)?.message;
  const msg =
    served === 'Aborted'
      ? `the wait for PodClaim ${key.namespace}/${key.name} was aborted`
      : served === 'Deleted'
        ? `PodClaim ${key.namespace}/${key.name} was deleted while it waited`
        : `PodClaim ${key.namespace}/${key.name} got no pod of pool ${pool} within ${timeoutMs} ms (${served}${said ? `: ${said}` : ''})`;
  throw new ClaimWaitError(served, msg, last ? { claim: last } : {});
}

async function boundPod(client: Client & Watcher, timers: Timers, claim: PodClaim): Promise<ClaimedPod> {
  const key = keyOfClaim(claim);
  const podName = podNameOf(claim)!;
  const pod = await client.get('Pod', { namespace: key.namespace, name: podName });
  const address = claim.status!.address!;
  const watches = new Set<() => void>();
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    for (const stop of watches) stop();
    watches.clear();
    try {
      await client.delete('PodClaim', key, { preconditions: { uid: claim.metadata.uid! } });
    } catch (e) {
      // Gone already (or re-created under its name by someone else: not ours to delete).
      if (!isApiError(e, 'NotFound') && !isApiError(e, 'Conflict')) throw e;
    }
  };
  return {
    claim,
    pod,
    address,
    ports: address.ports ?? [],
    onLost(handler) {
      let fired = false;
      const stop = watchClaim(client, timers, key, claim.metadata.resourceVersion, (c) => {
        const lost =
          !c ||
          c.metadata.uid !== claim.metadata.uid ||
          c.status?.phase === 'Lost' ||
          (podNameOf(c) !== undefined && podNameOf(c) !== podName) ||
          (podNameOf(c) === undefined && c.status?.phase !== 'Migrating');
        if (!lost || fired) return;
        fired = true;
        stop();
        watches.delete(stop);
        handler(c);
      });
      watches.add(stop);
      return () => {
        stop();
        watches.delete(stop);
      };
    },
    release,
    [Symbol.asyncDispose]: release,
  };
}
