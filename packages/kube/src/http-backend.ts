// What the transport needs from an HTTP library: send one prepared request, resolve at the response
// headers, and hand the body over as text or as a stream of chunks. Two implementations:
// node-http.ts (node:http/node:https with one kept-alive agent, used on Node) and fetch-http.ts
// (client-node's fetch library, used on Deno and behind a kubeconfig proxy-url).

export interface PreparedRequest {
  method: string;
  /** Path and query below the server URL, e.g. `/api/v1/namespaces/ns/pods?watch=true`. */
  pathAndQuery: string;
  /** Header names as sent; authentication is added by the backend. */
  headers: Record<string, string>;
  body?: string;
}

export interface BackendResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The whole body as UTF-8 text. */
  text(): Promise<string>;
  /**
   * Feeds each body chunk to `onChunk` until the body ends (resolves) or fails (rejects); `onChunk`
   * returning false stops reading and resolves.
   */
  stream(onChunk: (chunk: Uint8Array) => boolean): Promise<void>;
}

export interface HttpBackend {
  /**
   * Resolves at the response headers. `timeoutMs` bounds the wait for them (and, for `text()`, the
   * whole answer); `signal` aborts the request at any point. A timeout rejects with an error named
   * `TimeoutError`, as AbortSignal.timeout does. `stream`: the body is read as a stream for as long
   * as it lasts (a watch), so it does not hold one of the connections requests share.
   */
  send(
    req: PreparedRequest,
    o: { timeoutMs: number; signal?: AbortSignal; stream?: boolean },
  ): Promise<BackendResponse>;
  /** Closes kept-alive connections. */
  close(): void;
}

/** A timeout error errors.ts recognises (name `TimeoutError`), as AbortSignal.timeout throws. */
export function timeoutError(ms: number): Error {
  const e = new Error(`request timed out after ${ms} ms`);
  e.name = 'TimeoutError';
  return e;
}
