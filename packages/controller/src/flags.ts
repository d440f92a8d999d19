// Command-line flags of DESIGN.md. Unknown flags and bad values are a one-line error (exit 2).
import { parseArgs } from 'node:util';
import { LOG_LEVELS, type LogLevel } from './log.ts';

export interface ControllerFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  leaderElect: boolean;
  leaseNamespace: string;
  identity: string;
  metricsAddr: string;
  healthAddr: string;
  concurrency: number;
  sweepIntervalMs: number;
  requestTimeoutMs: number;
  /** Watch Nodes (cluster-wide get/list/watch) so pods on NotReady or cordoned nodes are not handed out. */
  watchNodes: boolean;
  /**
   * The pod this process runs in (downward API: $POD_NAME, $POD_NAMESPACE, $POD_UID, $CONTAINER_NAME),
   * recorded on the leader Lease so a standby takes over at once when it is dead. Unset unless the
   * first three are all set.
   */
  pod?: { namespace: string; name: string; uid: string; container?: string };
  logLevel: LogLevel;
  /** Sent as a bearer token to Http capture agents (re-read per request). */
  captureAgentTokenFile?: string;
}

export class FlagError extends Error {
  override readonly name = 'FlagError';
}

export const USAGE = `usage: claimkit-controller [flags]
  --kubeconfig PATH        kubeconfig (default $KUBECONFIG, ~/.kube/config, in-cluster)
  --context NAME           kubeconfig context
  --namespace NS           watch one namespace (default: all)
  --leader-elect           run workers only while holding the Lease (efficiency, not safety)
  --lease-namespace NS     namespace of the Lease (default $POD_NAMESPACE or claimkit-system)
  --identity ID            leader election identity (default $POD_NAME or hostname-pid)
  --metrics-addr ADDR      Prometheus /metrics ([host]:port, 0 disables; default :8080)
  --health-addr ADDR       /healthz and /readyz ([host]:port, 0 disables; default :8081)
  --concurrency N          reconcile workers (default 4)
  --sweep-interval DUR     capture recovery sweep period (e.g. 30s, 1m; default 30s)
  --request-timeout DUR    give up on an API request (a watch: its headers) after DUR (default 15s)
  --no-watch-nodes         do not watch Nodes (no cluster-wide read): a pod's own Ready condition
                           is then the only health signal for bind candidates
  --log-level LEVEL        debug|info|warn|error (default info)
  --capture-agent-token-file PATH
                           send this file's token (re-read per request) to Http capture agents as
                           Authorization: Bearer, e.g. a projected ServiceAccount token for audience
                           claimkit-capture-agent (deploy/controller mounts one); default: none
environment (downward API, set by deploy/controller): POD_NAME, POD_NAMESPACE, POD_UID and
  CONTAINER_NAME name the pod and container this replica runs in; with --leader-elect the leader
  records them on the Lease, and a standby takes over at once when that pod or container is dead
`;

/** `30s`, `1m`, `500ms`, `2h` or plain seconds. */
export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new FlagError(`not a duration: ${JSON.stringify(s)} (want e.g. 30s, 1m, 500ms)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit]!);
}

/** `:8080`, `127.0.0.1:8080`, `[::1]:8080`, or `0` (disabled). */
export function parseAddr(flag: string, s: string): { host: string; port: number } | undefined {
  if (s === '0') return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(s);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) throw new FlagError(`--${flag}: want [host]:port or 0, got ${JSON.stringify(s)}`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

export function parseFlags(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): ControllerFlags & { help: boolean } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        'leader-elect': { type: 'boolean' },
        'lease-namespace': { type: 'string' },
        identity: { type: 'string' },
        'metrics-addr': { type: 'string' },
        'health-addr': { type: 'string' },
        concurrency: { type: 'string' },
        'sweep-interval': { type: 'string' },
        'request-timeout': { type: 'string' },
        'watch-nodes': { type: 'boolean' },
        'log-level': { type: 'string' },
        'capture-agent-token-file': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
      allowNegative: true,
    }));
  } catch (e) {
    throw new FlagError((e as Error).message.split('\n')[0]!);
  }
  const str = (k: string) => values[k] as string | undefined;
  const concurrency = Number(str('concurrency') ?? '4');
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000)
    throw new FlagError(
      `--concurrency: want an integer from 1 to 1000, got ${JSON.stringify(str('concurrency'))}`,
    );
  let sweepIntervalMs: number;
  try {
    sweepIntervalMs = parseDuration(str('sweep-interval') ?? '30s');
  } catch (e) {
    throw new FlagError(`--sweep-interval: ${(e as Error).message}`);
  }
  if (sweepIntervalMs < 100) throw new FlagError('--sweep-interval: must be at least 100ms');
  let requestTimeoutMs: number;
  try {
    requestTimeoutMs = parseDuration(str('request-timeout') ?? '15s');
  } catch (e) {
    throw new FlagError(`--request-timeout: ${(e as Error).message}`);
  }
  if (requestTimeoutMs < 100) throw new FlagError('--request-timeout: must be at least 100ms');
  const logLevel = (str('log-level') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    throw new FlagError(`--log-level: want one of ${LOG_LEVELS.join('|')}, got ${JSON.stringify(logLevel)}`);
  const metricsAddr = str('metrics-addr') ?? ':8080';
  const healthAddr = str('health-addr') ?? ':8081';
  parseAddr('metrics-addr', metricsAddr);
  parseAddr('health-addr', healthAddr);
  for (const k of [
    'kubeconfig',
    'context',
    'namespace',
    'lease-namespace',
    'identity',
    'capture-agent-token-file',
  ])
    if (str(k) === '') throw new FlagError(`--${k}: must not be empty`);
  return {
    ...(str('kubeconfig') ? { kubeconfig: str('kubeconfig')! } : {}),
    ...(str('context') ? { context: str('context')! } : {}),
    ...(str('namespace') ? { namespace: str('namespace')! } : {}),
    leaderElect: values['leader-elect'] === true,
    leaseNamespace: str('lease-namespace') ?? env.POD_NAMESPACE ?? 'claimkit-system',
    identity: str('identity') ?? env.POD_NAME ?? `${env.HOSTNAME ?? 'claimkit'}-${process.pid}`,
    metricsAddr,
    healthAddr,
    concurrency,
    sweepIntervalMs,
    requestTimeoutMs,
    watchNodes: values['watch-nodes'] !== false,
    ...(env.POD_NAME && env.POD_NAMESPACE && env.POD_UID
      ? {
          pod: {
            namespace: env.POD_NAMESPACE,
            name: env.POD_NAME,
            uid: env.POD_UID,
            ...(env.CONTAINER_NAME ? { container: env.CONTAINER_NAME } : {}),
          },
        }
      : {}),
    logLevel,
    ...(str('capture-agent-token-file') ? { captureAgentTokenFile: str('capture-agent-token-file')! } : {}),
    help: values.help === true,
  };
}
