// The transport's HTTP library where node:http is not the right one: on Deno, and behind a
// kubeconfig proxy-url (SOCKS or HTTP proxies, which client-node's dispatchers speak). client-node's
// fetch library authenticates each request from the KubeConfig.
import type { KubeConfig } from '@kubernetes/client-node';
import type { HttpMethod, ResponseContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import { slimClientNode } from './client-node-slim.ts';
import {
  type BackendResponse,
  type HttpBackend,
  type PreparedRequest,
  timeoutError,
} from './http-backend.ts';

// The generated HTTP layer's own module (client-node's index would load every generated API),
// imported once the resolve hook is in place: a static import would resolve its fetch library's
// undici before the hook could defer it (client-node-slim.ts).
slimClientNode();
const { IsomorphicFetchHttpLibrary, RequestContext } = await import(
  '@kubernetes/client-node/dist/gen/http/http.js'
);
type RequestContext = InstanceType<typeof RequestContext>;

export class FetchHttpBackend implements HttpBackend {
  private readonly http = new IsomorphicFetchHttpLibrary();
  private readonly kc: KubeConfig;
  private readonly server: string;
  private dispatcher: ReturnType<RequestContext['getDispatcher']>;

  constructor(kc: KubeConfig, server: string) {
    this.kc = kc;
    this.server = server;
  }

  close(): void {}

  async send(req: PreparedRequest, o: { timeoutMs: number; signal?: AbortSignal }): Promise<BackendResponse> {
    // Until the headers, and for text() until the end of the body; a stream is ended by the caller.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(timeoutError(o.timeoutMs)), o.timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, timeout.signal]) : timeout.signal;
    const ctx = new RequestContext(
      this.server + req.pathAndQuery,
      req.method as (typeof HttpMethod)[keyof typeof HttpMethod],
    );
    for (const [k, v] of Object.entries(req.headers)) ctx.setHeaderParam(k, v);
    if (req.body !== undefined) ctx.setBody(req.body);
    ctx.setSignal(signal);
    await this.kc.applySecurityAuthentication(ctx);
    // client-node builds a new connection pool (an undici Agent) for every request it authenticates:
    // keep the first one, so requests reuse kept-alive connections instead of a handshake each.
    const dispatcher = ctx.getDispatcher();
    if (dispatcher !== undefined) {
      this.dispatcher ??= dispatcher;
      ctx.setDispatcher(this.dispatcher);
    }
    let resp: ResponseContext;
    try {
      resp = await this.http.send(ctx).toPromise();
    } catch (e) {
      clearTimeout(timer);
      throw timeout.signal.aborted ? timeoutError(o.timeoutMs) : e;
    }
    return {
      status: resp.httpStatusCode,
      headers: resp.headers,
      text: async () => {
        try {
          return await resp.body.text();
        } catch (e) {
          throw timeout.signal.aborted ? timeoutError(o.timeoutMs) : e;
        } finally {
          clearTimeout(timer);
        }
      },
      stream: async (onChunk) => {
        clearTimeout(timer);
        const stream = resp.body.stream();
        if (!stream) return;
        const reader = stream.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          if (!onChunk(value)) {
            await reader.cancel();
            return;
          }
        }
      },
    };
  }
}
