// What a Manager is built with: the controller's configuration (the options table's values) and
// the ports it talks through. One file, so manager.ts is the loop and not its option docs.
import type {
  CaptureBackend,
  Client,
  EventRecorder,
  ListWatcher,
  Reader,
  Timers,
  Tracer,
} from '@claimkit/core';
import type { ControllerConfig } from './flags.ts';
import type { Logger } from './log.ts';
import type { ControllerMetrics } from './metrics.ts';

/** What the Manager campaigns with: @claimkit/kube's LeaderElector (the loop around core's leaseStep). */
export interface Elector {
  /** Campaigns until stop(); calls back when leadership starts and stops. */
  start(handlers: { onStartedLeading(): void; onStoppedLeading(): void }): void;
  /** Stops campaigning and gives the lease up if held. */
  stop(): Promise<void>;
}

/**
 * What the Manager takes of the controller's configuration (flags.ts ControllerConfig: the options
 * table's values, so every default is the table's and none is written here).
 */
export type ManagerConfig = Pick<
  ControllerConfig,
  | 'namespace'
  | 'concurrency'
  | 'maxConcurrency'
  | 'sweepInterval'
  | 'resyncInterval'
  | 'poolCoalesce'
  | 'poolCoalesceHeadroom'
  | 'doctorInterval'
  | 'shutdownGrace'
  | 'watchNodes'
  | 'disableClaimEvents'
  | 'shard'
>;

export interface ManagerOptions {
  /** The flags' part the Manager runs by (controllerDefaults() with changes, in tests). */
  config: ManagerConfig;
  /** Live reads and all writes. */
  client: Client;
  /** List + watch for the informers (the kube client, or the ApiModel in tests). */
  source: ListWatcher;
  timers?: Timers;
  /** Wall clock for decisions (default timers.now). */
  now?: () => number;
  log?: Logger;
  /** Events (without Normal PodClaim Events with config.disableClaimEvents: claim-event-filter.ts). */
  recorder?: EventRecorder;
  /** A backend, or one built over the manager's cache (to pick by spec.backend.type). */
  backend?: CaptureBackend | ((cache: Reader) => CaptureBackend);
  metrics?: ControllerMetrics;
  /** With an elector only the leader runs workers and the sweep (efficiency, never safety). */
  elector?: Elector;
  /** Count API requests through the wrapper (leave false when the client reports them itself). */
  instrument?: boolean;
  /**
   * /readyz: how the API server is probed (default: a one-item list of Captures through `source`)
   * and how often while ready (default 10 s) and while not (default 1 s). See readiness.ts.
   */
  readiness?: {
    probe?: () => Promise<unknown>;
    probeIntervalMs?: number;
    recoveringProbeIntervalMs?: number;
  };
  queue?: { baseDelayMs?: number; maxDelayMs?: number; qps?: number; burst?: number };
  /** Spans of every reconcile (otlp.ts); stop() shuts it down after the last reconcile. Absent: off. */
  tracer?: Tracer & { shutdown?(): Promise<void> };
}
