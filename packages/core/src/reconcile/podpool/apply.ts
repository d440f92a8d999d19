// Carries out a pool's decision: writes in order, creates in slow-start batches (1, 2, 4, 8, ...,
// as the ReplicaSet controller's slowStartBatch) that stop after the first batch with an error, so a
// quota or admission refusal costs one request, not a burst. Every create and delete is recorded
// in the pool's expectations before the decision is left (see expectations.ts).

import type { Decision, Write } from '../../api/decision.ts';
import { type ApiError, isApiError } from '../../api/errors.ts';
import type { Client } from '../../api/ports.ts';
import type { Pod } from '../../api/types.ts';
import type { PoolExpectations } from '../../pool/expectations.ts';
import type { PoolStatusPacer } from '../../pool/status-pacer.ts';
import { type ApplyResult, applyWrite, type EventRecorder, recordEvents } from '../apply.ts';

/** The first batch's size; each successful batch doubles the next. */
const SLOW_START_INITIAL_BATCH = 1;

/** The outcome of a write the server may have carried out even though the request failed. */
function outcomeUnknown(e: ApiError): boolean {
  return e.reason === 'Timeout' || e.reason === 'Unavailable';
}

/** Port implementations throw ApiError; anything else (a process dying mid-decision) propagates. */
function asApiError(e: unknown): ApiError {
  if (isApiError(e)) return e;
  throw e;
}

export interface PoolApplyContext {
  client: Client;
  expectations: PoolExpectations;
  poolUid: string;
  now: () => number;
  recorder?: EventRecorder;
  /** Told of each status write that succeeded (pool/status-pacer.ts). */
  statusPacer?: PoolStatusPacer;
  /** Sizes of the create batches issued, for tests and metrics. */
  batches?: number[];
}

async function createBatch(x: PoolApplyContext, ws: Write[]): Promise<ApiError | undefined> {
  const results = await Promise.allSettled(ws.map((w) => applyWrite(x.client, w)));
  let first: ApiError | undefined;
  for (const r of results) {
    if (r.status === 'fulfilled') {
      x.expectations.created(x.poolUid, (r.value as Pod).metadata.name, x.now());
      continue;
    }
    const e = asApiError(r.reason);
    if (outcomeUnknown(e)) x.expectations.createUnknown(x.poolUid, x.now());
    first ??= e;
  }
  return first;
}

/** Deletes one pod: undefined when deleted, 'gone' when it already was, else the error. */
async function deleteOne(
  x: PoolApplyContext,
  w: Write & { op: 'delete' },
): Promise<ApiError | 'gone' | undefined> {
  const uid = w.preconditions?.uid;
  if (uid) x.expectations.deleting(x.poolUid, uid, w.key.name, x.now());
  try {
    await applyWrite(x.client, w);
    return undefined;
  } catch (err) {
    if (isApiError(err, 'NotFound')) return 'gone'; // the cache will show it
    const e = asApiError(err);
    if (uid && !outcomeUnknown(e)) x.expectations.deleteFailed(x.poolUid, uid);
    return e;
  }
}

export async function applyPoolDecision(x: PoolApplyContext, d: Decision): Promise<ApplyResult> {
  let applied = 0;
  const alreadyGone: number[] = [];
  const ws = d.writes;
  for (let i = 0; i < ws.length; ) {
    const w = ws[i]!;
    if (w.op === 'create') {
      let j = i;
      while (j < ws.length && ws[j]!.op === 'create') j++;
      let size = SLOW_START_INITIAL_BATCH;
      for (let k = i; k < j; ) {
        const batch = ws.slice(k, Math.min(j, k + size));
        x.batches?.push(batch.length);
        const error = await createBatch(x, batch);
        if (error) return { applied, failed: { write: batch[0]!, error }, ...gone(alreadyGone) };
        applied += batch.length;
        k += batch.length;
        size *= 2;
      }
      i = j;
      continue;
    }
    let error =
      w.op === 'delete'
        ? await deleteOne(x, w)
        : await applyWrite(x.client, w).then(
            () => undefined,
            (e: unknown) => asApiError(e),
          );
    if (error === 'gone') {
      alreadyGone.push(i);
      error = undefined;
    }
    if (error) return { applied, failed: { write: w, error }, ...gone(alreadyGone) };
    if (w.op === 'patchStatus') x.statusPacer?.wrote(x.poolUid, x.now());
    applied++;
    i++;
  }
  await recordEvents(x.recorder, d.events);
  return d.requeueAfterMs === undefined
    ? { applied, ...gone(alreadyGone) }
    : { applied, ...gone(alreadyGone), requeueAfterMs: d.requeueAfterMs };
}

const gone = (alreadyGone: number[]) => (alreadyGone.length > 0 ? { alreadyGone } : {});
