// claimkit-capture-agent's options: one table from which the parsing, --help and validation come.
import { CAPTURE_AGENT_PORT } from '@claimkit/core';
import {
  defineOptions,
  helpText,
  type OptionValues,
  parseOptions,
  type Startup,
  startup,
} from '@claimkit/core/options';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../log.ts';
import {
  AGENT_STATE_DIR,
  AGENT_STORE_DIR,
  KUBELET_CHECKPOINT_DIR,
  KUBELET_PORT,
  KUBELET_TIMEOUT_MS,
  SERVICE_ACCOUNT_TOKEN_FILE,
} from './kubelet.ts';
import { parseImageRepository } from './ref.ts';

/** The agent's port: core's CAPTURE_AGENT_PORT, the one the manifests publish on every node. */
export const AGENT_PORT = CAPTURE_AGENT_PORT;

export interface AgentFlags {
  listen: { host: string; port: number };
  capture: 'kubelet' | 'sleep';
  /** --capture=sleep only. */
  durationMs: number;
  stateDir: string;
  /** Usernames (TokenReview, audience claimkit-capture-agent) that may use the protocol; empty: anyone. */
  allowedCallers: string[];
  logLevel: LogLevel;
  logFormat: LogFormat;
  kubelet: {
    host: string;
    port: number;
    tokenFile: string;
    caFile?: string;
    insecureTLS: boolean;
    timeoutMs: number;
    checkpointDir: string;
    storeDir: string;
    nodeName: string;
    /** --image-repository given: push each archive as a checkpoint image. */
    image?: {
      repository: string;
      caFile?: string;
      insecureTLS: boolean;
      plainHTTP: boolean;
      authFile?: string;
    };
  };
}

const HOST_PORT = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/;

/** The flags. */
export const AGENT_OPTIONS = defineOptions({
  listen: {
    type: 'string',
    arg: 'HOST:PORT',
    default: `0.0.0.0:${AGENT_PORT}`,
    validate: (s: string) =>
      HOST_PORT.test(s) && Number(HOST_PORT.exec(s)![3]) <= 65535
        ? undefined
        : `want host:port, got ${JSON.stringify(s)}`,
    help: 'serve the Http capture protocol here',
  },
  capture: {
    type: 'enum',
    values: ['kubelet', 'sleep'],
    default: 'kubelet',
    help: "kubelet: checkpoint the holder's container through this node's kubelet; sleep: wait --duration-ms and report a made-up ref (tests, demos)",
  },
  'duration-ms': {
    type: 'int',
    min: 0,
    default: 2000,
    help: 'how long a sleep capture takes, only with --capture=sleep',
  },
  'state-dir': {
    type: 'string',
    arg: 'DIR',
    default: AGENT_STATE_DIR,
    help: 'fencing tokens and jobs, saved on every change, loaded on start',
  },
  'node-name': {
    type: 'string',
    arg: 'NAME',
    env: 'NODE_NAME',
    defaultText: 'none',
    help: "this node's name, in refs",
  },
  'kubelet-host': {
    type: 'string',
    arg: 'HOST',
    env: 'NODE_IP',
    defaultText: 'none',
    help: "the kubelet's address",
  },
  'kubelet-port': {
    type: 'int',
    min: 1,
    max: 65535,
    default: KUBELET_PORT,
    help: "the kubelet's HTTPS port",
  },
  'kubelet-token-file': {
    type: 'string',
    arg: 'FILE',
    default: SERVICE_ACCOUNT_TOKEN_FILE,
    help: 'bearer token for the kubelet, re-read on every call',
  },
  'kubelet-ca': {
    type: 'string',
    arg: 'FILE',
    defaultText: "the system's CAs",
    help: "verify the kubelet's certificate against this PEM CA bundle",
  },
  'kubelet-insecure-tls': { type: 'bool', help: "do not verify the kubelet's certificate" },
  'kubelet-timeout': {
    type: 'duration',
    min: 100,
    default: KUBELET_TIMEOUT_MS,
    help: 'give up on a kubelet call after DUR',
  },
  'checkpoint-dir': {
    type: 'string',
    arg: 'DIR',
    default: KUBELET_CHECKPOINT_DIR,
    help: "the kubelet's checkpoint directory as mounted here",
  },
  'store-dir': {
    type: 'string',
    arg: 'DIR',
    default: AGENT_STORE_DIR,
    help: 'archives are kept as DIR/<namespace>/<capture>/<token>.tar',
  },
  'image-repository': {
    type: 'string',
    arg: 'HOST[:PORT]/PATH',
    defaultText: 'none: no push, checkpoint:// refs',
    validate: (s: string) => {
      try {
        parseImageRepository(s);
        return undefined;
      } catch (e) {
        return (e as Error).message;
      }
    },
    help: "also push each archive as a checkpoint OCI image to HOST[:PORT]/PATH/<namespace>-<capture>:<token> and report image:<repository>@sha256:<manifest digest> (a pool's pods on any node restore from it)",
  },
  'registry-ca': {
    type: 'string',
    arg: 'FILE',
    defaultText: "the system's CAs",
    help: "verify the registry's certificate against this PEM CA bundle",
  },
  'registry-insecure-tls': { type: 'bool', help: "do not verify the registry's certificate" },
  'registry-plain-http': {
    type: 'bool',
    help: 'talk to the registry over http, not https (a local or test registry)',
  },
  'registry-auth-file': {
    type: 'string',
    arg: 'FILE',
    defaultText: 'none: anonymous',
    help: "the registry's credentials: a Docker config file (auths[host].auth, or username and password; a kubernetes.io/dockerconfigjson Secret's .dockerconfigjson), re-read per push; Basic, or a Bearer token from the registry's token realm",
  },
  'allowed-callers': {
    type: 'list',
    arg: 'U1,U2',
    defaultText: 'none given = anyone who reaches the port; a warning',
    help: 'only these users may ask for checkpoints: each request carries a ServiceAccount token for audience claimkit-capture-agent, reviewed by the API server (TokenReview); e.g. system:serviceaccount:claimkit-system:claimkit-controller',
  },
  'log-level': { type: 'enum', values: LOG_LEVELS, default: 'info', help: 'the least level logged' },
  'log-format': {
    type: 'enum',
    values: LOG_FORMATS,
    default: 'json',
    help: 'json: one object per line; text: the same keys as logfmt',
  },
});

const HELP = {
  usage: 'usage: claimkit-capture-agent [flags]',
  footer: `A kubelet capture's ref: checkpoint://<node><stored path>@sha256:<hex of the archive>;
with an image repository, image:<repository>@sha256:<hex of the pushed image's manifest>.
Logs: one JSON object per line on stderr ({"ts","level","msg",...}), or logfmt with --log-format text.`,
};

export const AGENT_USAGE = helpText(AGENT_OPTIONS, HELP);

const KUBELET_FLAGS = [
  'kubelet-host',
  'kubelet-port',
  'kubelet-token-file',
  'kubelet-ca',
  'kubelet-insecure-tls',
  'kubelet-timeout',
  'checkpoint-dir',
  'store-dir',
  'image-repository',
  'registry-ca',
  'registry-insecure-tls',
  'registry-plain-http',
  'registry-auth-file',
] as const;

const REGISTRY_FLAGS = [
  'registry-ca',
  'registry-insecure-tls',
  'registry-plain-http',
  'registry-auth-file',
] as const;

type Values = OptionValues<typeof AGENT_OPTIONS>;

/** The rules across flags (run when every flag alone is good, and not for --help). */
function checks(v: Values, given: Set<keyof typeof AGENT_OPTIONS & string>): (string | undefined)[] {
  if (v.capture === 'sleep')
    return KUBELET_FLAGS.filter((k) => given.has(k)).map((k) => `--${k}: only with --capture=kubelet`);
  return [
    given.has('duration-ms') ? '--duration-ms: only with --capture=sleep' : undefined,
    v['kubelet-ca'] !== undefined && v['kubelet-insecure-tls']
      ? '--kubelet-ca and --kubelet-insecure-tls: give one of them'
      : undefined,
    ...(v['image-repository'] === undefined
      ? REGISTRY_FLAGS.filter((k) => given.has(k)).map((k) => `--${k}: only with --image-repository`)
      : []),
    v['registry-ca'] !== undefined && v['registry-insecure-tls']
      ? '--registry-ca and --registry-insecure-tls: give one of them'
      : undefined,
    v['kubelet-host'] ? undefined : '--kubelet-host: required for --capture=kubelet ($NODE_IP is not set)',
    v['node-name'] ? undefined : '--node-name: required for --capture=kubelet ($NODE_NAME is not set)',
  ];
}

function flagsFrom(v: Values): AgentFlags {
  const m = HOST_PORT.exec(v.listen)!;
  return {
    listen: { host: m[1] ?? (m[2] || '0.0.0.0'), port: Number(m[3]) },
    capture: v.capture,
    durationMs: v['duration-ms'],
    stateDir: v['state-dir'],
    allowedCallers: v['allowed-callers'],
    logLevel: v['log-level'],
    logFormat: v['log-format'],
    kubelet: {
      host: v['kubelet-host'] ?? '',
      port: v['kubelet-port'],
      tokenFile: v['kubelet-token-file'],
      ...(v['kubelet-ca'] !== undefined ? { caFile: v['kubelet-ca'] } : {}),
      insecureTLS: v['kubelet-insecure-tls'],
      timeoutMs: v['kubelet-timeout'],
      checkpointDir: v['checkpoint-dir'],
      storeDir: v['store-dir'],
      nodeName: v['node-name'] ?? '',
      ...(v['image-repository'] !== undefined
        ? {
            image: {
              repository: v['image-repository'],
              ...(v['registry-ca'] !== undefined ? { caFile: v['registry-ca'] } : {}),
              insecureTLS: v['registry-insecure-tls'],
              plainHTTP: v['registry-plain-http'],
              ...(v['registry-auth-file'] !== undefined ? { authFile: v['registry-auth-file'] } : {}),
            },
          }
        : {}),
    },
  };
}

/** The flags (a UsageError listing every problem), and whether --help was asked for. */
export function parseAgentFlags(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): AgentFlags & { help: boolean } {
  const { values, help } = parseOptions(AGENT_OPTIONS, argv, env, { checks });
  return { ...flagsFrom(values), help };
}

/** main.ts's start-up decision: the help, one usage-error line, or the flags. */
export function agentStartup(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Startup<AgentFlags> {
  return startup('claimkit-capture-agent', AGENT_OPTIONS, HELP, argv, env, flagsFrom, { checks });
}
