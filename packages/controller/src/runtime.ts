// The controller on a real cluster: the Manager wired to @claimkit/kube (client with request
// metrics, which is also the informers' list/watch source, event recorder, Lease elector) and to the
// Http and Kubelet capture backends. Used by main.ts, `npm start`, the e2e suites and the benchmarks.
import { isApiError, KIND_INFO, ONE_SHARD, type Shard, shardLeaseName } from '@claimkit/core';
import {
  createKubeClient,
  InformerStartError,
  type KubeClient,
  type KubeClientOptions,
  type KubeConfig,
  KubeConfigError,
  KubeEventRecorder,
  LeaderElector,
  loadKubeConfig,
} from '@claimkit/kube';
import { watchNodeRuntime } from '@claimkit/kube/runtime-stats';
import { DispatchingBackend, HttpCaptureBackend, KubeletCaptureBackend } from './backends/index.ts';
import { CONTROLLER_DEFAULTS } from './defaults.ts';
import { type Logger, silentLogger } from './log.ts';
import { Manager, type ManagerOptions } from './manager.ts';
import { ControllerMetrics, LEADER_ELECTION_NAME } from './metrics.ts';
import { OtlpTracer } from './otlp.ts';

export interface KubeControllerOptions {
  kubeconfig?: string | KubeConfig;
  context?: string;
  namespace?: string;
  concurrency?: number;
  /** See ManagerOptions.maxConcurrency. */
  maxConcurrency?: number;
  sweepIntervalMs?: number;
  resyncMs?: number;
  /** See ManagerOptions.poolCoalesceMs. */
  poolCoalesceMs?: number;
  /** See ManagerOptions.poolHeadroomCoalesceMs. */
  poolHeadroomCoalesceMs?: number;
  leaderElect?: boolean;
  leaseNamespace?: string;
  identity?: string;
  log?: Logger;
  shutdownGraceMs?: number;
  /** Per-request timeout of the API client (default: the binary's --request-timeout, 15 s). */
  timeoutMs?: number;
  /** Capture agent request timeout (default 5 s). */
  backendTimeoutMs?: number;
  /** A token file sent to Http capture agents as Authorization: Bearer (re-read per request). */
  captureAgentTokenFile?: string;
  queue?: ManagerOptions['queue'];
  /** Watch Nodes (default true; see ManagerOptions.watchNodes). */
  watchNodes?: boolean;
  /** --disable-claim-events (default false; see ManagerOptions.disableClaimEvents). */
  disableClaimEvents?: boolean;
  /**
   * The pod (and container) this process runs in, from the downward API: with leaderElect it is
   * recorded on the Lease, and a standby watches the holder's pod and takes over when it is dead.
   */
  pod?: { namespace: string; name: string; uid: string; container?: string };
  /** Send traces to this OTLP/HTTP endpoint (unset: tracing off; see otlp.ts). */
  otlp?: { endpoint: string; serviceName?: string };
  /** --shard (default one shard; see ManagerOptions.shard): with leaderElect, its own Lease. */
  shard?: Shard;
}

export interface KubeController {
  manager: Manager;
  client: KubeClient;
  server: string;
}

export function createKubeController(o: KubeControllerOptions = {}): KubeController {
  const kc =
    typeof o.kubeconfig === 'object'
      ? o.kubeconfig
      : loadKubeConfig({
          ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
          ...(o.context ? { context: o.context } : {}),
        });
  const log = o.log ?? silentLogger;
  const metrics = new ControllerMetrics();
  // Event-loop lag, GC pauses and /proc for process_* and nodejs_* (ControllerMetrics reads `process` itself).
  watchNodeRuntime(metrics.runtime);
  const client = createKubeClient(kc, {
    timeoutMs: o.timeoutMs ?? CONTROLLER_DEFAULTS.requestTimeoutMs,
    userAgent: 'claimkit-controller',
    // Nothing the controller reads is in them, and cutting them before the parse is about a third
    // less decoding on every pod event and write answer.
    omitManagedFields: true,
    onRequest: (verb, kind, code, ms) => metrics.apiRequest(verb, kind, code, ms),
  });
  const identity = o.identity ?? `claimkit-controller-${process.pid}`;
  const recorder = new KubeEventRecorder(client, {
    component: 'claimkit-controller',
    instance: identity,
    onError: (e, ev) =>
      log.debug('recording an event failed', {
        reason: ev.reason,
        error: (e as Error)?.message ?? String(e),
      }),
  });
  const manager = new Manager({
    client,
    source: client,
    instrument: false,
    metrics,
    log,
    recorder,
    ...(o.namespace ? { namespace: o.namespace } : {}),
    ...(o.concurrency ? { concurrency: o.concurrency } : {}),
    ...(o.maxConcurrency ? { maxConcurrency: o.maxConcurrency } : {}),
    ...(o.sweepIntervalMs ? { sweepIntervalMs: o.sweepIntervalMs } : {}),
    ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}),
    ...(o.poolCoalesceMs !== undefined ? { poolCoalesceMs: o.poolCoalesceMs } : {}),
    ...(o.poolHeadroomCoalesceMs !== undefined ? { poolHeadroomCoalesceMs: o.poolHeadroomCoalesceMs } : {}),
    ...(o.shutdownGraceMs !== undefined ? { shutdownGraceMs: o.shutdownGraceMs } : {}),
    ...(o.queue ? { queue: o.queue } : {}),
    ...(o.watchNodes === false ? { watchNodes: false } : {}),
    ...(o.disableClaimEvents ? { disableClaimEvents: true } : {}),
    ...(o.shard ? { shard: o.shard } : {}),
    ...(o.otlp ? { tracer: new OtlpTracer({ ...o.otlp, log }) } : {}),
    backend: (cache) =>
      new DispatchingBackend(cache, {
        Http: new HttpCaptureBackend({
          timeoutMs: o.backendTimeoutMs ?? 5000,
          ...(o.captureAgentTokenFile ? { tokenFile: o.captureAgentTokenFile } : {}),
        }),
        Kubelet: new KubeletCaptureBackend({
          // A checkpoint is answered when it is written: allow it minutes.
          apiServer: (method, path) => client.raw(method, path, { timeoutMs: 120_000 }),
        }),
      }),
    ...(o.leaderElect
      ? {
          elector: new LeaderElector(client, {
            namespace: o.leaseNamespace ?? CONTROLLER_DEFAULTS.leaseNamespace,
            name: shardLeaseName(LEADER_ELECTION_NAME, o.shard ?? ONE_SHARD),
            identity,
            log,
            ...(o.pod ? { pod: o.pod, watcher: client } : {}),
            onTakeover: (_previous, reason) => metrics.leaderTakeovers.inc({ reason }),
          }),
        }
      : {}),
  });
  return { manager, client, server: client.server };
}

/** A client for a kubeconfig file (tests, `npm start`, benchmarks). */
export function kubeClient(kubeconfig: string, opts: KubeClientOptions = {}): KubeClient {
  return createKubeClient(loadKubeConfig({ kubeconfig }), { userAgent: 'claimkit-e2e', ...opts });
}

/** One readable sentence for a failure to start (bad kubeconfig, unreachable, RBAC, CRDs missing). */
export function explainStartError(e: unknown, server?: string): string {
  if (e instanceof KubeConfigError) return e.message;
  if (e instanceof InformerStartError) {
    const cause = e.cause;
    const plural = KIND_INFO[e.kind].plural;
    const group = KIND_INFO[e.kind].apiVersion.includes('/')
      ? KIND_INFO[e.kind].apiVersion.split('/')[0]
      : '';
    const resource = group ? `${plural}.${group}` : plural;
    if (isApiError(cause, 'Forbidden')) {
      // Nodes are the one cluster-wide read; an install without it can do without them.
      const orNodes =
        e.kind === 'Node'
          ? ', or start the controller with --no-watch-nodes (no node health for bind candidates)'
          : '';
      return `missing RBAC: the controller may not list and watch ${resource} (${cause.message}); grant verbs get,list,watch on ${resource} (see deploy/controller/rbac.yaml)${orNodes}`;
    }
    if (isApiError(cause, 'NotFound') && group) {
      return `the API server${server ? ` at ${server}` : ''} does not serve ${resource}: install the CRDs (kubectl apply -f deploy/crds)`;
    }
    return `cannot list ${resource}${server ? ` from ${server}` : ''}: ${(cause as Error)?.message ?? String(cause)}`;
  }
  return (e as Error)?.message ?? String(e);
}
