// claimkit-controller's options: one table (DESIGN.md's flags and a few more) from which the
// parsing, --help and validation come; its defaults (defaults.ts) are the ones every in-process
// controller uses too (runtime.ts, `npm start`, the e2e harness, the benches), so they all run what ships.
import { ONE_SHARD, parseShard, type Shard } from '@claimkit/core';
import {
  type CamelValues,
  camelValues,
  defineOptions,
  helpText,
  type OptionValues,
  parseOptions,
  type Startup,
  startup,
  UsageError,
} from '@claimkit/core/options';
import { CONTROLLER_DEFAULTS } from './defaults.ts';
import { LOG_FORMATS, LOG_LEVELS } from './log.ts';

export { parseDuration, UsageError } from '@claimkit/core/options';

/** An OTLP/HTTP base URL: http(s), no query (the exporter appends /v1/traces). */
const otlpEndpointProblem = (s: string) => {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return `want an http(s) URL such as http://otel-collector:4318, got ${JSON.stringify(s)}`;
  }
  return u.protocol === 'http:' || u.protocol === 'https:'
    ? undefined
    : `want an http(s) URL such as http://otel-collector:4318, got ${JSON.stringify(s)}`;
};

const ADDR = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/;
const addrProblem = (s: string) =>
  s === '0' || (ADDR.test(s) && Number(ADDR.exec(s)![3]) <= 65535)
    ? undefined
    : `want [host]:port or 0, got ${JSON.stringify(s)}`;

export const CONTROLLER_OPTIONS = defineOptions({
  kubeconfig: {
    type: 'string',
    arg: 'PATH',
    help: 'kubeconfig',
    defaultText: '$KUBECONFIG, ~/.kube/config, in-cluster',
  },
  context: { type: 'string', arg: 'NAME', help: 'kubeconfig context' },
  namespace: { type: 'string', short: 'n', arg: 'NS', help: 'watch one namespace', defaultText: 'all' },
  'leader-elect': { type: 'bool', help: 'run workers only while holding the Lease (efficiency, not safety)' },
  'lease-namespace': {
    type: 'string',
    arg: 'NS',
    env: 'POD_NAMESPACE',
    default: CONTROLLER_DEFAULTS.leaseNamespace,
    help: 'namespace of the Lease',
  },
  identity: {
    type: 'string',
    arg: 'ID',
    env: 'POD_NAME',
    help: 'leader election identity',
    defaultText: 'hostname-pid',
  },
  'metrics-addr': {
    type: 'string',
    arg: 'ADDR',
    default: CONTROLLER_DEFAULTS.metricsAddr,
    validate: addrProblem,
    help: 'Prometheus /metrics ([host]:port, 0 disables)',
  },
  'health-addr': {
    type: 'string',
    arg: 'ADDR',
    default: CONTROLLER_DEFAULTS.healthAddr,
    validate: addrProblem,
    help: '/healthz and /readyz ([host]:port, 0 disables)',
  },
  concurrency: {
    type: 'int',
    min: 1,
    max: 1000,
    default: CONTROLLER_DEFAULTS.concurrency,
    help: 'reconcile workers',
  },
  'max-concurrency': {
    type: 'int',
    min: 1,
    max: 1000,
    default: CONTROLLER_DEFAULTS.maxConcurrency,
    help: 'reconcile workers while the queue backs up (a key waited 100ms); at most --concurrency: fixed',
  },
  'sweep-interval': {
    type: 'duration',
    min: 100,
    default: CONTROLLER_DEFAULTS.sweepInterval,
    help: 'capture recovery sweep period',
  },
  'request-timeout': {
    type: 'duration',
    min: 100,
    default: CONTROLLER_DEFAULTS.requestTimeout,
    help: 'give up on an API request (a watch: its headers) after DUR',
  },
  'capture-agent-timeout': {
    type: 'duration',
    min: 100,
    default: CONTROLLER_DEFAULTS.captureAgentTimeout,
    help: 'give up on a request to an Http capture agent (start a job, poll it) after DUR',
  },
  'checkpoint-timeout': {
    type: 'duration',
    min: 1000,
    default: CONTROLLER_DEFAULTS.checkpointTimeout,
    help: 'give up on a Kubelet backend checkpoint (the API server proxying to the kubelet, answered when the archive is written) after DUR',
  },
  'resync-interval': {
    type: 'duration',
    min: 0,
    default: CONTROLLER_DEFAULTS.resyncInterval,
    help: 're-enqueue every object this often (0: never)',
  },
  'pool-coalesce': {
    type: 'duration',
    min: 0,
    default: CONTROLLER_DEFAULTS.poolCoalesce,
    help: 'a PodPool reconcile triggered by pod or claim changes waits this long to take a burst at once',
  },
  'pool-coalesce-headroom': {
    type: 'duration',
    min: 0,
    default: CONTROLLER_DEFAULTS.poolCoalesceHeadroom,
    help: 'the same wait for a pool with Idle to spare (at least max(16, minIdle/2) Idle pods beyond its waiting claims); never shorter than --pool-coalesce',
  },
  shard: {
    type: 'string',
    arg: 'INDEX/COUNT',
    env: 'CLAIMKIT_SHARD',
    default: '0/1',
    validate: (s: string) => {
      const r = parseShard(s);
      return 'problem' in r ? r.problem : undefined;
    },
    help: 'run as shard INDEX of COUNT controllers, each reconciling the pools that hash to it (a claim with its pool) under its own Lease (claimkit-controller-shard-INDEX-of-COUNT); shard 0 also runs the capture sweep and the doctor. For more than one core of reconciles and writes; every shard still watches everything',
  },
  'doctor-interval': {
    type: 'duration',
    min: 0,
    default: CONTROLLER_DEFAULTS.doctorInterval,
    help: 'refresh claimkit_doctor_findings (core’s doctor checks over the cache) this often while leading (0: never)',
  },
  'shutdown-grace': {
    type: 'duration',
    min: 0,
    default: CONTROLLER_DEFAULTS.shutdownGrace,
    help: 'on SIGTERM, wait this long for reconciles in flight',
  },
  'watch-nodes': {
    type: 'bool',
    negatable: true,
    default: true,
    help: 'watch Nodes (a cluster-wide read) so pods on NotReady or cordoned nodes are not bound; with --no-watch-nodes a pod’s own Ready condition is the only health signal for bind candidates',
  },
  'disable-claim-events': {
    type: 'bool',
    default: CONTROLLER_DEFAULTS.disableClaimEvents,
    help: 'write no Normal Events about PodClaims (Pending, Bound, Finalized, ...: one write per claim and step); Warnings and Events on pools, claim sets, captures and pods are still written, and every Event is still logged and counted in claimkit_events_total',
  },
  'log-level': {
    type: 'enum',
    values: LOG_LEVELS,
    default: CONTROLLER_DEFAULTS.logLevel,
    help: 'the least level logged',
  },
  'log-format': {
    type: 'enum',
    values: LOG_FORMATS,
    default: CONTROLLER_DEFAULTS.logFormat,
    help: 'json: one object per line; text: the same keys as logfmt',
  },
  'capture-agent-token-file': {
    type: 'string',
    arg: 'PATH',
    defaultText: 'none',
    help: 'send this file’s token (re-read per request) to Http capture agents as Authorization: Bearer, e.g. a projected ServiceAccount token for audience claimkit-capture-agent (deploy/controller mounts one)',
  },
  'otlp-endpoint': {
    type: 'string',
    arg: 'URL',
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    defaultText: 'none: tracing off',
    validate: otlpEndpointProblem,
    help: 'send traces (OTLP/HTTP JSON to URL/v1/traces): a span per reconcile with its gather, decide and writes; one trace per PodClaim from create to Bound, recorded in its annotation claimkit.dev/traceparent',
  },
  'otlp-service-name': {
    type: 'string',
    arg: 'NAME',
    env: 'OTEL_SERVICE_NAME',
    default: CONTROLLER_DEFAULTS.otlpServiceName,
    help: 'service.name of the traces sent to --otlp-endpoint',
  },
});

const HELP = {
  usage: 'usage: claimkit-controller [flags]',
  footer: `environment (downward API, set by deploy/controller): POD_NAME, POD_NAMESPACE, POD_UID and
  CONTAINER_NAME name the pod and container this replica runs in; with --leader-elect the leader
  records them on the Lease, and a standby takes over at once when that pod or container is dead
Logs: one JSON object per line on stderr ({"ts","level","msg",...}), or logfmt with --log-format text.`,
};
export const USAGE = helpText(CONTROLLER_OPTIONS, HELP);

/** Where this process runs (downward API: $POD_NAME, $POD_NAMESPACE, $POD_UID, $CONTAINER_NAME). */
export interface PodIdentity {
  namespace: string;
  name: string;
  uid: string;
  container?: string;
}

/**
 * The controller's configuration: the options table's values under camelCase names (durations in
 * ms), so the table is the type and no flag is mapped by hand; --shard parsed, the identity resolved
 * and, with the downward API's variables all set, the pod this process runs in (recorded on the
 * leader Lease so a standby takes over at once when it is dead).
 */
export type ControllerConfig = Omit<CamelValues<typeof CONTROLLER_OPTIONS>, 'shard' | 'identity'> & {
  shard: Shard;
  identity: string;
  pod?: PodIdentity;
};

/** --shard's value, validated by the table already. */
function shardFlag(s: string): Shard {
  const r = parseShard(s);
  return 'problem' in r ? ONE_SHARD : r;
}

/** `:8080`, `127.0.0.1:8080`, `[::1]:8080`, or `0` (disabled). */
export function parseAddr(flag: string, s: string): { host: string; port: number } | undefined {
  if (s === '0') return undefined;
  const problem = addrProblem(s);
  if (problem) throw new UsageError(`--${flag}: ${problem}`);
  const m = ADDR.exec(s)!;
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port: Number(m[3]) };
}

function configFrom(
  v: OptionValues<typeof CONTROLLER_OPTIONS>,
  env: Record<string, string | undefined>,
): ControllerConfig {
  return {
    ...camelValues(v),
    shard: shardFlag(v.shard),
    identity: v.identity ?? `${env.HOSTNAME ?? 'claimkit'}-${process.pid}`,
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
  };
}

/** The flags (a UsageError listing every problem), and whether --help was asked for. */
export function parseFlags(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): ControllerConfig & { help: boolean } {
  const { values, help } = parseOptions(CONTROLLER_OPTIONS, argv, env);
  return { ...configFrom(values, env), help };
}

/** main.ts's start-up decision: the help, one usage-error line, or the flags. */
export function controllerStartup(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Startup<ControllerConfig> {
  return startup('claimkit-controller', CONTROLLER_OPTIONS, HELP, argv, env, (v) => configFrom(v, env));
}

/** The shipped configuration with no flag given (what an in-process controller runs unless told otherwise). */
export function controllerDefaults(): ControllerConfig {
  return configFrom(parseOptions(CONTROLLER_OPTIONS, [], {}).values, {});
}
