// Carries out a Decision through the Writer ports. Writes run in order and stop at the first
// failure: every decision is built so that any prefix of it is a safe state to resume from.

import type { Decision, EventSpec, Write } from '../api/decision.ts';
import { ApiError, isApiError } from '../api/errors.ts';
import type { Client } from '../api/ports.ts';

export interface EventRecorder {
  record(e: EventSpec): void | Promise<void>;
}

export interface ApplyResult {
  applied: number;
  /** The write that failed and why; Conflict/NotFound mean "re-read and decide again". */
  failed?: { write: Write; error: ApiError };
  requeueAfterMs?: number;
  /** The server's answer to each write applied, in order (a follow-up may fence on it). */
  written?: unknown[];
  /** Indexes of the deletes that found their object already gone (done, but they removed nothing). */
  alreadyGone?: number[];
}

export async function applyWrite(client: Client, w: Write): Promise<unknown> {
  switch (w.op) {
    case 'create':
      return client.create(w.object);
    case 'update':
      return client.update(w.object);
    case 'updateStatus':
      return client.updateStatus(w.object);
    case 'patch':
      return client.patch(w.kind, w.key, w.patch, w.precondition);
    case 'patchStatus':
      return client.patchStatus(w.kind, w.key, w.patch, w.precondition);
    case 'delete':
      return client.delete(w.kind, w.key, w.preconditions ? { preconditions: w.preconditions } : {});
  }
}

export async function applyDecision(
  client: Client,
  d: Decision,
  recorder?: EventRecorder,
): Promise<ApplyResult> {
  let applied = 0;
  const written: unknown[] = [];
  const alreadyGone: number[] = [];
  const result = () => ({ applied, written, ...(alreadyGone.length > 0 ? { alreadyGone } : {}) });
  for (const w of d.writes) {
    try {
      written.push(await applyWrite(client, w));
      applied++;
    } catch (e) {
      // Deleting what is already gone is done.
      if (w.op === 'delete' && isApiError(e, 'NotFound')) {
        written.push(undefined);
        alreadyGone.push(applied);
        applied++;
        continue;
      }
      const error = isApiError(e) ? e : new ApiError('Unavailable', String((e as Error)?.message ?? e));
      return { ...result(), failed: { write: w, error } };
    }
  }
  await recordEvents(recorder, d.events);
  return d.requeueAfterMs === undefined ? result() : { ...result(), requeueAfterMs: d.requeueAfterMs };
}

/** Records a decision's Events once its writes have landed; best effort, as in client-go's recorder. */
export async function recordEvents(recorder: EventRecorder | undefined, events: EventSpec[]): Promise<void> {
  if (!recorder) return;
  for (const ev of events) {
    try {
      await recorder.record(ev);
    } catch {
      // A lost Event is never a reason to fail or retry a reconcile.
    }
  }
}
