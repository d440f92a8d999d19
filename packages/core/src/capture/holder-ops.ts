// The holder's side of a capture (External backend): acquire for a pod, renew, complete, fail,
// release. Every write carries the resourceVersion it read; on Conflict the operation re-reads and
// decides again, so a superseded holder gets ClaimSuperseded and writes nothing.
import { ApiError, getOrUndefined, isApiError } from '../api/errors.ts';
import { matchesSelector } from '../api/labels.ts';
import type { ObjectKey } from '../api/meta.ts';
import { isDeleting, isPodReady } from '../api/pod-predicates.ts';
import type { Client } from '../api/ports.ts';
import type { Capture, CaptureStatus, Pod, PodRef } from '../api/types.ts';

import {
  type AcquireOutcome,
  completeClaim,
  decideAcquire,
  failClaim,
  releaseClaim,
  renewClaim,
  retryCapture,
} from './claim.ts';
import { classifyHolder, lookupHolder } from './holder-liveness.ts';

const MAX_CONFLICT_RETRIES = 8;

async function fencedStatusWrite(
  client: Client,
  key: ObjectKey,
  next: (c: Capture) => CaptureStatus,
): Promise<Capture> {
  for (let i = 0; ; i++) {
    const c = await client.get('Capture', key);
    const status = next(c); // throws ClaimSuperseded before any write
    try {
      return await client.updateStatus({ ...c, status });
    } catch (e) {
      if (isApiError(e, 'Conflict') && i < MAX_CONFLICT_RETRIES) continue;
      throw e;
    }
  }
}

/**
 * Why `live` (the pod named by `ref`, read from the server) may not hold `c`, or undefined when it
 * is a candidate: it exists with that UID, is not being deleted, matches spec.selector and is Ready
 * — what the controller requires of the holders it picks itself.
 */
function notACandidate(c: Capture, ref: PodRef, live: Pod | undefined): string | undefined {
  if (!live) return 'it does not exist';
  if (ref.uid && live.metadata.uid !== ref.uid) {
    return `its UID is ${live.metadata.uid}, not ${ref.uid} (a pod recreated under the same name is another pod)`;
  }
  if (isDeleting(live)) return 'it is being deleted';
  if (!matchesSelector(live.metadata.labels, c.spec.selector)) return 'it does not match spec.selector';
  if (!isPodReady(live)) return 'it is not Ready';
  return undefined;
}

/**
 * Acquires the capture for `pod`, which must be one of its candidates (see notACandidate; an
 * ApiError BadRequest says why not). Returns what decideAcquire decided: acquired, re-acquired,
 * taken over, or held by someone else / closed (nothing written). `rules`: see SafetyRules
 * (reconcile/safety-rules.ts); by default the production rule.
 */
export async function acquireCapture(
  client: Client,
  key: ObjectKey,
  pod: PodRef,
  now: () => number,
  rules: { classifyHolder: typeof classifyHolder } = { classifyHolder },
): Promise<{ outcome: AcquireOutcome; capture: Capture }> {
  for (let i = 0; ; i++) {
    const c = await client.get('Capture', key);
    const live = await getOrUndefined(client.get('Pod', { namespace: key.namespace, name: pod.name }));
    const why = notACandidate(c, pod, live);
    if (why !== undefined) {
      throw new ApiError('BadRequest', `pod ${pod.name} may not hold capture ${key.name}: ${why}`);
    }
    const claim = c.status?.claim;
    const holder = claim ? await lookupHolder({ client }, key.namespace, claim.holder.name, []) : undefined;
    const outcome = decideAcquire(c, pod, holder, now(), rules);
    if (outcome.kind === 'held' || outcome.kind === 'closed') return { outcome, capture: c };
    try {
      const written = await client.updateStatus({ ...c, status: outcome.status });
      return { outcome, capture: written };
    } catch (e) {
      if (isApiError(e, 'Conflict') && i < MAX_CONFLICT_RETRIES) continue;
      throw e;
    }
  }
}

export const renewCapture = (client: Client, key: ObjectKey, token: number, now: () => number) =>
  fencedStatusWrite(client, key, (c) => renewClaim(c.status ?? {}, token, now()));

export const completeCapture = (
  client: Client,
  key: ObjectKey,
  token: number,
  ref: string,
  now: () => number,
  rules: { completeClaim: typeof completeClaim } = { completeClaim },
) => fencedStatusWrite(client, key, (c) => rules.completeClaim(c.status ?? {}, token, ref, now()));

export const failCapture = (client: Client, key: ObjectKey, token: number, error: string) =>
  fencedStatusWrite(client, key, (c) => failClaim(c.status ?? {}, token, error, c.spec.maxAttempts));

export const releaseCapture = (client: Client, key: ObjectKey, token: number) =>
  fencedStatusWrite(client, key, (c) => releaseClaim(c.status ?? {}, token));

export const retryFailedCapture = (client: Client, key: ObjectKey) =>
  fencedStatusWrite(client, key, (c) => {
    if (c.status?.phase !== 'Failed') {
      throw new ApiError('BadRequest', `capture ${key.name} is ${c.status?.phase ?? 'Pending'}, not Failed`);
    }
    return retryCapture(c.status);
  });
