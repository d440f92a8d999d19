// claimkit-capture-agent's flags. Unknown flags and bad values are a FlagError (one line, exit 2).
import { parseArgs } from 'node:util';
import { FlagError, parseDuration } from '../flags.ts';
import {
  AGENT_STATE_DIR,
  AGENT_STORE_DIR,
  KUBELET_CHECKPOINT_DIR,
  KUBELET_PORT,
  KUBELET_TIMEOUT_MS,
  SERVICE_ACCOUNT_TOKEN_FILE,
} from './kubelet.ts';

export const AGENT_PORT = 8750;

export interface AgentFlags {
  listen: { host: string; port: number };
  capture: 'kubelet' | 'sleep';
  /** --capture=sleep only. */
  durationMs: number;
  stateDir: string;
  /** Usernames (TokenReview, audience claimkit-capture-agent) that may use the protocol; empty: anyone. */
  allowedCallers: string[];
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
  };
}

export const AGENT_USAGE = `usage: claimkit-capture-agent [flags]
  --listen HOST:PORT          serve the Http capture protocol here (default 0.0.0.0:${AGENT_PORT})
  --capture kubelet|sleep     kubelet: checkpoint the holder's container through this node's kubelet;
                              sleep: wait --duration-ms and report a made-up ref (tests, demos)
                              (default kubelet)
  --duration-ms N             how long a sleep capture takes, only with --capture=sleep
                              (default 2000)
  --state-dir DIR             fencing tokens and jobs, saved on every change, loaded on start
                              (default ${AGENT_STATE_DIR})
  --node-name NAME            this node's name, in refs (default $NODE_NAME)
  --kubelet-host HOST         the kubelet's address (default $NODE_IP)
  --kubelet-port PORT         the kubelet's HTTPS port (default ${KUBELET_PORT})
  --kubelet-token-file FILE   bearer token for the kubelet, re-read on every call
                              (default ${SERVICE_ACCOUNT_TOKEN_FILE})
  --kubelet-ca FILE           verify the kubelet's certificate against this PEM CA bundle
                              (default: the system's CAs)
  --kubelet-insecure-tls      do not verify the kubelet's certificate (default off)
  --kubelet-timeout DUR       give up on a kubelet call after DUR, e.g. 5m (default 120s)
  --checkpoint-dir DIR        the kubelet's checkpoint directory as mounted here
                              (default ${KUBELET_CHECKPOINT_DIR})
  --store-dir DIR             archives are kept as DIR/<namespace>/<capture>/<token>.tar
                              (default ${AGENT_STORE_DIR})
  --allowed-callers U1,U2     only these users may ask for checkpoints: each request carries a
                              ServiceAccount token for audience claimkit-capture-agent, reviewed by
                              the API server (TokenReview); e.g.
                              system:serviceaccount:claimkit-system:claimkit-controller
                              (default: none given = anyone who reaches the port; a warning)
  -h, --help                  this help
A kubelet capture's ref: checkpoint://<node><stored path>@sha256:<hex of the archive>.
Logs: one JSON object per line on stderr ({"time","level","msg",...}).
`;

/** The flags (node:util parseArgs options). */
export const AGENT_OPTIONS = {
  listen: { type: 'string' },
  capture: { type: 'string' },
  'duration-ms': { type: 'string' },
  'state-dir': { type: 'string' },
  'node-name': { type: 'string' },
  'kubelet-host': { type: 'string' },
  'kubelet-port': { type: 'string' },
  'kubelet-token-file': { type: 'string' },
  'kubelet-ca': { type: 'string' },
  'kubelet-insecure-tls': { type: 'boolean' },
  'kubelet-timeout': { type: 'string' },
  'checkpoint-dir': { type: 'string' },
  'store-dir': { type: 'string' },
  'allowed-callers': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const KUBELET_FLAGS = [
  'kubelet-host',
  'kubelet-port',
  'kubelet-token-file',
  'kubelet-ca',
  'kubelet-insecure-tls',
  'kubelet-timeout',
  'checkpoint-dir',
  'store-dir',
] as const;

export function parseAgentFlags(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): AgentFlags & { help: boolean } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: AGENT_OPTIONS,
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new FlagError((e as Error).message.split('\n')[0]!);
  }
  const help = values.help === true;
  const str = (k: string) => values[k] as string | undefined;
  for (const [k, v] of Object.entries(values)) if (v === '') throw new FlagError(`--${k}: must not be empty`);

  const listenText = str('listen') ?? `0.0.0.0:${AGENT_PORT}`;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(listenText);
  if (!m || Number(m[3]) > 65535)
    throw new FlagError(`--listen: want host:port, got ${JSON.stringify(listenText)}`);
  const listen = { host: m[1] ?? (m[2] || '0.0.0.0'), port: Number(m[3]) };

  const capture = str('capture') ?? 'kubelet';
  if (capture !== 'kubelet' && capture !== 'sleep')
    throw new FlagError(`--capture: want kubelet or sleep, got ${JSON.stringify(capture)}`);
  if (capture === 'kubelet' && str('duration-ms') !== undefined)
    throw new FlagError('--duration-ms: only with --capture=sleep');
  const durationMs = Number(str('duration-ms') ?? '2000');
  if (!Number.isFinite(durationMs) || durationMs < 0)
    throw new FlagError(`--duration-ms: want a number >= 0, got ${JSON.stringify(str('duration-ms'))}`);
  if (capture === 'sleep') {
    const given = KUBELET_FLAGS.filter((k) => values[k] !== undefined);
    if (given.length) throw new FlagError(`--${given[0]}: only with --capture=kubelet`);
  }

  const port = Number(str('kubelet-port') ?? String(KUBELET_PORT));
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new FlagError(`--kubelet-port: want a port number, got ${JSON.stringify(str('kubelet-port'))}`);
  let timeoutMs = KUBELET_TIMEOUT_MS;
  if (str('kubelet-timeout') !== undefined) {
    try {
      timeoutMs = parseDuration(str('kubelet-timeout')!);
    } catch (e) {
      throw new FlagError(`--kubelet-timeout: ${(e as Error).message}`);
    }
    if (timeoutMs < 100) throw new FlagError('--kubelet-timeout: must be at least 100ms');
  }
  if (str('kubelet-ca') !== undefined && values['kubelet-insecure-tls'] === true)
    throw new FlagError('--kubelet-ca and --kubelet-insecure-tls: give one of them');
  const host = str('kubelet-host') ?? env.NODE_IP ?? '';
  const nodeName = str('node-name') ?? env.NODE_NAME ?? '';
  // --help answers even where the environment is not a node's.
  if (capture === 'kubelet' && !help) {
    if (!host) throw new FlagError('--kubelet-host: required for --capture=kubelet ($NODE_IP is not set)');
    if (!nodeName) throw new FlagError('--node-name: required for --capture=kubelet ($NODE_NAME is not set)');
  }
  return {
    help,
    listen,
    capture,
    durationMs,
    stateDir: str('state-dir') ?? AGENT_STATE_DIR,
    allowedCallers: (str('allowed-callers') ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean),
    kubelet: {
      host,
      port,
      tokenFile: str('kubelet-token-file') ?? SERVICE_ACCOUNT_TOKEN_FILE,
      ...(str('kubelet-ca') !== undefined ? { caFile: str('kubelet-ca')! } : {}),
      insecureTLS: values['kubelet-insecure-tls'] === true,
      timeoutMs,
      checkpointDir: str('checkpoint-dir') ?? KUBELET_CHECKPOINT_DIR,
      storeDir: str('store-dir') ?? AGENT_STORE_DIR,
      nodeName,
    },
  };
}
