// core's Client and Watcher ports over a KubeConfig's current context, assembled from three parts:
// transport.ts (authenticated HTTP, timeouts, throttling retries), rest.ts (each verb as a REST call,
// typed API errors) and watch.ts (the watch stream decoded into handler calls).
import type { Client, Kind, KindMap, RequestVerb, Watcher, WatchHandlers } from '@claimkit/core';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeRest, type RequestObserver } from './rest.ts';
import { KubeTransport, type TransportOptions } from './transport.ts';
import { type KubeWatchOptions, startWatch } from './watch.ts';

export type { RequestVerb } from '@claimkit/core';
export type { KubeWatchOptions } from './watch.ts';

export interface KubeClientOptions extends TransportOptions {
  /**
   * Called once per API request when it finishes: HTTP status (0 when no response arrived) and
   * duration; the controller turns it into Prometheus metrics. A throttled request sent again
   * reports each attempt; a watch reports when its response headers arrive. Must not throw.
   */
  onRequest?: (verb: RequestVerb, kind: Kind, code: number, ms: number) => void;
}

export interface KubeClient extends Client, Watcher {
  readonly kubeConfig: KubeConfig;
  /** The API server URL of the current context. */
  readonly server: string;
  watch<K extends Kind>(kind: K, opts: KubeWatchOptions, handlers: WatchHandlers<KindMap[K]>): () => void;
  /**
   * An authenticated request to any API server path (e.g. the node proxy `/api/v1/nodes/n/proxy/...`):
   * every HTTP answer resolves, a transport failure throws ApiError. Default timeout: the client's.
   */
  raw(method: 'GET' | 'POST', path: string, opts?: { timeoutMs?: number }): Promise<RawResponse>;
}

export interface RawResponse {
  status: number;
  text: string;
}

/** The onRequest hook made safe: metrics never break a request. */
function safeObserver(onRequest: KubeClientOptions['onRequest']): RequestObserver {
  if (!onRequest) return () => {};
  return (verb, kind, code, ms) => {
    try {
      onRequest(verb, kind, code, ms);
    } catch {
      // metrics never break a request
    }
  };
}

class KubeClientImpl extends KubeRest implements KubeClient {
  readonly kubeConfig: KubeConfig;
  readonly server: string;

  constructor(kc: KubeConfig, opts: KubeClientOptions) {
    const transport = new KubeTransport(kc, opts);
    super(transport, safeObserver(opts.onRequest));
    this.kubeConfig = kc;
    this.server = transport.server;
  }

  watch<K extends Kind>(kind: K, opts: KubeWatchOptions, handlers: WatchHandlers<KindMap[K]>): () => void {
    return startWatch(this.transport, kind, opts, handlers, (code, ms) =>
      this.observe('watch', kind, code, ms),
    );
  }

  async raw(method: 'GET' | 'POST', path: string, opts: { timeoutMs?: number } = {}): Promise<RawResponse> {
    const r = await this.transport.sendOnce({ method, path, what: path }, opts.timeoutMs);
    return { status: r.status, text: r.text };
  }
}

/** core's Client + Watcher (and the informers' watch stream) over a KubeConfig's current context. */
export function createKubeClient(kc: KubeConfig, opts: KubeClientOptions = {}): KubeClient {
  return new KubeClientImpl(kc, opts);
}
