// What a command runs with: output streams, colour, the clock and a way to reach a cluster.
// main.ts fills it from the process; unit tests fill it with buffers and core's ApiModel.
import type { Client, EventRecorder, Timers, Watcher } from '@claimkit/core';
import type { Style } from './output.ts';

/** The namespace of a kubeconfig context that names none (kubectl's). */
export const DEFAULT_NAMESPACE = 'default';

export interface Connection {
  client: Client & Watcher;
  /** The namespace of the kubeconfig context (kubectl's default for -n). */
  namespace: string;
  /** Records Kubernetes Events for repairs (doctor --fix); optional. */
  recorder?: EventRecorder;
}

export interface ConnectOptions {
  kubeconfig?: string;
  context?: string;
  /** kubectl's --as: the user to impersonate. */
  as?: string;
  /** kubectl's --as-group (one group). */
  asGroup?: string;
}

export interface Ctx {
  out(text: string): void;
  err(text: string): void;
  style: Style;
  now(): number;
  env: Record<string, string | undefined>;
  connect(opts: ConnectOptions): Promise<Connection>;
  /** How the user ran us: `claimctl` (the default) or `kubectl claimkit`; help and usage errors say it. */
  prog?: string;
  /** The timers waits run on (`claim create --wait`, `claim wait`); default the process's. */
  timers?: Timers;
}

/**
 * Exit codes: 0 ok, 1 problems found / not acquired / no pod in time, 2 usage or API error, 3
 * superseded token, 4 refused by the API server (RBAC, validation, admission).
 */
export const EXIT = { ok: 0, problems: 1, error: 2, superseded: 3, refused: 4 } as const;
