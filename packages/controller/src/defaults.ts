// The controller's shipped defaults: the options table's (flags.ts), the Manager's and
// createKubeController's (runtime.ts), and the manifests'. A leaf: it imports nothing of this package
// but log.ts's types, so flags.ts, runtime.ts and manager.ts can all read it without a cycle.
import {
  DEFAULT_POOL_COALESCE_MS,
  DEFAULT_POOL_HEADROOM_COALESCE_MS,
  SYSTEM_NAMESPACE,
} from '@claimkit/core';
import type { LogFormat, LogLevel } from './log.ts';

/**
 * The shipped defaults, under the names of the controller's config (flags.ts ControllerConfig:
 * durations in ms); the options table takes them, and a test checks the parsed defaults equal them.
 */
export const CONTROLLER_DEFAULTS = {
  // A bind holds its worker for three writes in sequence (pod, claim, status): at 4 workers a
  // control plane answering each in 20 ms caps binds near 66/s, below agent-sandbox's published 91/s
  // (issue 22). The workers are promises, not threads: 8 cost no measurable CPU (pnpm bench).
  concurrency: 8,
  // While the queue backs up (worker-surge.ts). 32 is also the kube client's cap on connections for
  // requests: more workers would wait for a socket, not for the server.
  maxConcurrency: 32,
  sweepInterval: 30_000,
  requestTimeout: 15_000,
  captureAgentTimeout: 5_000,
  // The kubelet answers a checkpoint when it is written: allow it minutes.
  checkpointTimeout: 120_000,
  resyncInterval: 600_000,
  poolCoalesce: DEFAULT_POOL_COALESCE_MS,
  poolCoalesceHeadroom: DEFAULT_POOL_HEADROOM_COALESCE_MS,
  shutdownGrace: 20_000,
  doctorInterval: 60_000,
  leaseNamespace: SYSTEM_NAMESPACE,
  metricsAddr: ':8080',
  healthAddr: ':8081',
  logLevel: 'info' as LogLevel,
  otlpServiceName: 'claimkit-controller',
  logFormat: 'json' as LogFormat,
  disableClaimEvents: false,
} as const;
