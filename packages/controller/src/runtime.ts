// The controller on a real cluster: the Manager wired to @claimkit/kube (client with request
// metrics, which is also the informers' list/watch source, event recorder, Lease elector) and to the
// Http and Kubelet capture backends. Used by main.ts, `npm start`, the e2e suites and the benchmarks.
import { isApiError, KIND_INFO, shardLeaseName } from '@claimkit/core';
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
import type { ControllerConfig } from './flags.ts';
import { type Logger, silentLogger } from './log.ts';
import { Manager } from './manager.ts';
import type { ManagerOptions } from './manager-options.ts';
import { ControllerMetrics, LEADER_ELECTION_NAME } from './metrics.ts';
import { OtlpTracer } from './otlp.ts';

export interface KubeControllerOptions {
  /** The controller's configuration: main.ts's parsed flags, or controllerDefaults() with changes. */
  config: ControllerConfig;
  /** A loaded kubeconfig to use instead of config.kubeconfig and config.context. */
  kubeConfig?: KubeConfig;
  log?: Logger;
  queue?: ManagerOptions['queue'];
}

export interface KubeController {
  manager: Manager;
  client: KubeClient;
  server: string;
}

export function createKubeController(o: KubeControllerOptions): KubeController {
  const c = o.config;
  const kc =
    o.kubeConfig ??
    loadKubeConfig({
      ...(c.kubeconfig ? { kubeconfig: c.kubeconfig } : {}),
      ...(c.context ? { context: c.context } : {}),
    });
  const log = o.log ?? silentLogger;
  const metrics = new ControllerMetrics();
  // Event-loop lag, GC pauses and /proc for process_* and nodejs_* (ControllerMetrics reads `process` itself).
  watchNodeRuntime(metrics.runtime);
  const client = createKubeClient(kc, {
    timeoutMs: c.requestTimeout,
    userAgent: 'claimkit-controller',
    // Nothing the controller reads is in them, and cutting them before the parse is about a third
    // less decoding on every pod event and write answer.
    omitManagedFields: true,
    onRequest: (verb, kind, code, ms) => metrics.apiRequest(verb, kind, code, ms),
  });
  const identity = c.identity;
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
    config: c,
    client,
    source: client,
    instrument: false,
    metrics,
    log,
    recorder,
    ...(o.queue ? { queue: o.queue } : {}),
    ...(c.otlpEndpoint
      ? { tracer: new OtlpTracer({ endpoint: c.otlpEndpoint, serviceName: c.otlpServiceName, log }) }
      : {}),
    backend: (cache) =>
      new DispatchingBackend(cache, {
        Http: new HttpCaptureBackend({
          timeoutMs: c.captureAgentTimeout,
          ...(c.captureAgentTokenFile ? { tokenFile: c.captureAgentTokenFile } : {}),
        }),
        Kubelet: new KubeletCaptureBackend({
          // A checkpoint is answered when it is written: allow it minutes.
          apiServer: (method, path) => client.raw(method, path, { timeoutMs: c.checkpointTimeout }),
        }),
      }),
    ...(c.leaderElect
      ? {
          elector: new LeaderElector(client, {
            namespace: c.leaseNamespace,
            name: shardLeaseName(LEADER_ELECTION_NAME, c.shard),
            identity,
            log,
            ...(c.pod ? { pod: c.pod, watcher: client } : {}),
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
