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
 */
export class WatchStreamDecoder {
  private readonly text = new TextDecoder();
  private buf = '';

  push(chunk: Uint8Array): WatchFrame[] {
    this.buf += this.text.decode(chunk, { stream: true });
    const out: WatchFrame[] = [];
    let nl = this.buf.indexOf('\n');
    while (nl >= 0) {
      const frame = decodeLine(this.buf.slice(0, nl));
      if (frame) out.push(frame);
      this.buf = this.buf.slice(nl + 1);
      nl = this.buf.indexOf('\n');
    }
    return out;
  }

  /** The stream ended: a last line without its newline still counts. */
  end(): WatchFrame[] {
    const rest = this.buf + this.text.decode();
    this.buf = '';
    const frame = decodeLine(rest);
    return frame ? [frame] : [];
  }
}

function decodeLine(raw: string): WatchFrame | undefined {
  const line = raw.trim();
  if (line === '') return undefined;
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
    observe(resp.httpStatusCode, performance.now() - t0);
    observed = true;
    if (resp.httpStatusCode !== 200) {
      const text = await resp.body.text();
      close(httpError(resp.httpStatusCode, text, desc, resp.headers['retry-after']));
      return;
    }
    const stream = resp.body.stream();
    if (!stream) {
      close();
      return;
    }
    arm(inactivityMs);
    const reader = stream.getReader();
    const decoder = new WatchStreamDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      arm(inactivityMs);
      if (!deliver(decoder.push(value))) return;
    }
    if (!deliver(decoder.end())) return;
    close();
  } catch (e) {
    if (!observed) observe(0, performance.now() - t0);
    // Our own abort (stop or inactivity) is a normal end: resume from the last resourceVersion.
    if (isStopped() || idle) close();
    else close(transportError(e, desc));
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (!abort.signal.aborted) abort.abort();
    close();
  }
}
