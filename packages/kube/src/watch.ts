// core's Watcher port over a streamed watch request: the API server's newline-delimited JSON events
// decoded into handler calls (events, bookmarks, an ERROR event as onClose with its ApiError), and
// the end of the stream — server timeout, silence, failure or stop() — reported exactly as the port
// promises: onClose exactly once, never after stop().
import type {
  ApiError,
  Kind,
  KindMap,
  KubeObject,
  WatchEventType,
  WatchHandlers,
  WatchOptions,
} from '@claimkit/core';
import { httpError, transportError } from './errors.ts';
import { withoutManagedFields } from './managed-fields.ts';
import {
  collectionPath,
  collectionText,
  fieldSelectorString,
  selectorString,
  withTypeMeta,
} from './resources.ts';
import type { HttpRequest, KubeTransport } from './transport.ts';

/** core's WatchOptions plus what only a real connection has. */
export interface KubeWatchOptions extends WatchOptions {
  /** End the watch (onClose without an error) when nothing arrived for this long. Default 60 s. */
  inactivityMs?: number;
}

/** One decoded line of a watch stream; lines of other types are dropped. */
export type WatchFrame =
  | { type: WatchEventType; object: unknown }
  | { type: 'BOOKMARK'; resourceVersion: string }
  | { type: 'ERROR'; status: unknown };

/**
 * Turns the bytes of a watch response into frames. Chunks may split a line, or a character, anywhere;
 * blank and unparseable lines are skipped (as client-go's decoder resynchronises on the next line).
 * Lines are found in the bytes and decoded one at a time: no string is rebuilt per event.
 * With `omitManagedFields` each object's metadata.managedFields are cut before the parse.
 */
export class WatchStreamDecoder {
  /** The start of a line that has not ended yet (bytes of earlier chunks). */
  private pending: Buffer[] = [];
  private readonly omitManagedFields: boolean;

  constructor(opts: { omitManagedFields?: boolean } = {}) {
    this.omitManagedFields = opts.omitManagedFields ?? false;
  }

  push(chunk: Uint8Array): WatchFrame[] {
    const buf = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const out: WatchFrame[] = [];
    let start = 0;
    let nl = buf.indexOf(NEWLINE, start);
    while (nl >= 0) {
      let line: string;
      if (this.pending.length > 0) {
        this.pending.push(buf.subarray(start, nl));
        line = Buffer.concat(this.pending).toString('utf8');
        this.pending = [];
      } else {
        line = buf.toString('utf8', start, nl);
      }
      const frame = this.decode(line);
      if (frame) out.push(frame);
      start = nl + 1;
      nl = buf.indexOf(NEWLINE, start);
    }
    // Copied: the caller may reuse the chunk's memory.
    if (start < buf.length) this.pending.push(Buffer.from(buf.subarray(start)));
    return out;
  }

  /** The stream ended: a last line without its newline still counts. */
  end(): WatchFrame[] {
    const rest = Buffer.concat(this.pending).toString('utf8');
    this.pending = [];
    const frame = this.decode(rest);
    return frame ? [frame] : [];
  }

  private decode(line: string): WatchFrame | undefined {
    return decodeLine(this.omitManagedFields ? withoutManagedFields(line) : line);
  }
}

const NEWLINE = 0x0a;

function decodeLine(line: string): WatchFrame | undefined {
  if (line.trim() === '') return undefined;
  let ev: { type?: unknown; object?: unknown };
  try {
    ev = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (ev === null || typeof ev !== 'object') return undefined;
  switch (ev.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      return { type: ev.type, object: ev.object };
    case 'BOOKMARK': {
      const rv = (ev.object as KubeObject | undefined)?.metadata?.resourceVersion;
      return rv ? { type: 'BOOKMARK', resourceVersion: rv } : undefined;
    }
    case 'ERROR':
      return { type: 'ERROR', status: ev.object };
    default:
      return undefined;
  }
}

/** Hears a watch's answer once: its HTTP status (0 when none came) and the time to it. */
export type WatchObserver = (code: number, ms: number) => void;

/** Starts a watch; returns stop(). Failures never throw: they arrive through onClose. */
export function startWatch<K extends Kind>(
  transport: KubeTransport,
  kind: K,
  opts: KubeWatchOptions,
  handlers: WatchHandlers<KindMap[K]>,
  observe: WatchObserver,
): () => void {
  const abort = new AbortController();
  let stopped = false;
  void runWatch(transport, kind, opts, handlers, observe, abort, () => stopped);
  return () => {
    stopped = true;
    abort.abort();
  };
}

async function runWatch<K extends Kind>(
  transport: KubeTransport,
  kind: K,
  opts: KubeWatchOptions,
  handlers: WatchHandlers<KindMap[K]>,
  observe: WatchObserver,
  abort: AbortController,
  isStopped: () => boolean,
): Promise<void> {
  const req: HttpRequest = {
    method: 'GET',
    path: collectionPath(kind, opts.namespace),
    what: collectionText(kind, opts.namespace),
    query: {
      watch: 'true',
      labelSelector: selectorString(opts.labelSelector),
      fieldSelector: fieldSelectorString(opts.fieldSelector),
      resourceVersion: opts.resourceVersion || undefined,
      allowWatchBookmarks: opts.allowWatchBookmarks ? 'true' : undefined,
      timeoutSeconds: opts.timeoutSeconds !== undefined ? String(opts.timeoutSeconds) : undefined,
    },
  };
  const desc = { ...transport.describe(req), method: 'WATCH' };
  const inactivityMs = opts.inactivityMs ?? 60_000;
  let closed = false;
  // Exactly once, and never after stop(): the caller who stopped the watch knows it ended.
  const close = (err?: ApiError) => {
    if (closed || isStopped()) return;
    closed = true;
    try {
      handlers.onClose?.(err);
    } catch {
      // handler errors are the caller's
    }
  };
  // Until the response headers: the per-request timeout; then: the inactivity limit. Either one
  // firing is a normal end (resume from the last resourceVersion), not a failure.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let idle = false;
  const arm = (ms: number) => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      idle = true;
      abort.abort();
    }, ms);
    timer.unref?.();
  };
  /** Delivers frames; false once the watch is over (stopped, or an ERROR event closed it). */
  const deliver = (frames: WatchFrame[]): boolean => {
    for (const f of frames) {
      if (isStopped()) return false;
      if (f.type === 'ERROR') {
        close(httpError(0, f.status, desc));
        abort.abort();
        return false;
      }
      if (f.type === 'BOOKMARK') handlers.onBookmark?.(f.resourceVersion);
      else handlers.onEvent({ type: f.type, object: withTypeMeta(kind, f.object as KindMap[K]) });
    }
    return true;
  };
  const t0 = performance.now();
  let observed = false;
  try {
    arm(transport.timeoutMs);
    const resp = await transport.open(req, abort.signal);
    observe(resp.status, performance.now() - t0);
    observed = true;
    if (resp.status !== 200) {
      const text = await resp.text();
      close(httpError(resp.status, text, desc, resp.headers['retry-after']));
      return;
    }
    arm(inactivityMs);
    const decoder = new WatchStreamDecoder({ omitManagedFields: transport.omitManagedFields });
    let over = false;
    await resp.stream((chunk) => {
      arm(inactivityMs);
      over = !deliver(decoder.push(chunk));
      return !over;
    });
    if (over || !deliver(decoder.end())) return;
    close();
  } catch (e) {
    if (!observed) observe(0, performance.now() - t0);
    // Our own abort (stop or inactivity) is a normal end: resume from the last resourceVersion.
    // No headers within the request timeout is a quiet server: resume as after an idle end.
    const headersTimedOut = !observed && (e as { name?: unknown } | undefined)?.name === 'TimeoutError';
    if (isStopped() || idle || headersTimedOut) close();
    else close(transportError(e, desc));
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (!abort.signal.aborted) abort.abort();
    close();
  }
}
