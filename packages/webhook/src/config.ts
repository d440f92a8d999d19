// Configuration shared by the Node and Deno entries: flags first, then environment variables.
// Pure: the entry passes its argv and environment in.

import { isLogLevel, LOG_LEVELS, type LogLevel } from '@claimkit/core';
import { DEFAULT_CONTROLLER_USERNAME } from './app.ts';

export interface WebhookConfig {
  port: number;
  host: string;
  certFile: string;
  keyFile: string;
  controllerUsers: string[];
  controllerGroups: string[];
  /** Path to a kubeconfig; empty = in-cluster (or the default kubeconfig) */
  kubeconfig: string;
  /** `kube` watches PodClaims through the API server; `off` skips pod-reference checks (warning). */
  claimIndex: 'kube' | 'off';
  logLevel: LogLevel;
}

export const CONFIG_HELP = `claimkit-webhook: the claimkit admission webhook (HTTPS only)

  --port N                  listen port (env CLAIMKIT_WEBHOOK_PORT, default 8443)
  --host ADDR               listen address (env CLAIMKIT_WEBHOOK_HOST, default 0.0.0.0)
  --tls-cert-file PATH      PEM certificate (env CLAIMKIT_WEBHOOK_TLS_CERT, default /tls/tls.crt)
  --tls-private-key-file P  PEM key (env CLAIMKIT_WEBHOOK_TLS_KEY, default /tls/tls.key)
  --controller-users LIST   comma-separated usernames allowed to write claim spec podName/nodeName/
                            sourcePod (env CLAIMKIT_WEBHOOK_CONTROLLER_USERS,
                            default ${DEFAULT_CONTROLLER_USERNAME})
  --controller-groups LIST  comma-separated groups with the same right (env CLAIMKIT_WEBHOOK_CONTROLLER_GROUPS)
  --kubeconfig PATH         kubeconfig for the PodClaim watch (env KUBECONFIG; default in-cluster)
  --claim-index kube|off    watch PodClaims (default kube) or skip pod-reference checks (off)
  --log-level LEVEL         debug|info|warn|error (env CLAIMKIT_WEBHOOK_LOG_LEVEL, default info)

Certificates are reloaded when their files change.`;

/** A flag or environment variable the webhook cannot use; the message is one line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** What an entry does with its arguments: print the help, fail on bad input, or run. */
export type Startup = { help: string } | { error: string } | { config: WebhookConfig };

/**
 * The entries' start-up decision: `--help` is printed to stdout (exit 0); a bad flag or value is one
 * line on stderr naming the problem and pointing at `--help` (exit 2), never the whole usage.
 */
export function startup(argv: readonly string[], env: Record<string, string | undefined>): Startup {
  if (argv.some((a) => a === '--help' || a === '-h')) return { help: `${CONFIG_HELP}\n` };
  try {
    return { config: parseConfig(argv, env) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { error: `claimkit-webhook: ${err.message} (see --help)` };
  }
}

/**
 * Reads the certificate and key once before serving, so a missing or unreadable file is one clear
 * line naming the flag and the path instead of a stack trace from deep inside the server.
 */
export async function readTlsPair<T>(
  cfg: Pick<WebhookConfig, 'certFile' | 'keyFile'>,
  read: (path: string) => Promise<T>,
): Promise<{ cert: T; key: T }> {
  const one = async (flag: string, what: string, path: string) => {
    try {
      return await read(path);
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      throw new ConfigError(`cannot read the TLS ${what} ${path} (--${flag}): ${reason}`);
    }
  };
  const cert = await one('tls-cert-file', 'certificate', cfg.certFile);
  const key = await one('tls-private-key-file', 'private key', cfg.keyFile);
  return { cert, key };
}

/** One line for a start-up failure (the entries print it and exit 1). */
export function startError(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return `claimkit-webhook: ${msg.split('\n')[0]}`;
}

const KNOWN_FLAGS = [
  'port',
  'host',
  'tls-cert-file',
  'tls-private-key-file',
  'controller-users',
  'controller-groups',
  'kubeconfig',
  'claim-index',
  'log-level',
];

function list(s: string | undefined): string[] | undefined {
  if (s === undefined) return undefined;
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

export function parseConfig(argv: readonly string[], env: Record<string, string | undefined>): WebhookConfig {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new ConfigError(`unexpected argument ${JSON.stringify(a)}`);
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    if (!KNOWN_FLAGS.includes(name)) throw new ConfigError(`unknown flag --${name}`);
    if (eq >= 0) flags.set(name, a.slice(eq + 1));
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(`flag ${a} needs a value`);
      flags.set(a.slice(2), next);
      i++;
    }
  }
  const portRaw = flags.get('port') ?? env.CLAIMKIT_WEBHOOK_PORT ?? '8443';
  const port = Number(portRaw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`invalid port ${portRaw}`);
  const claimIndex = flags.get('claim-index') ?? env.CLAIMKIT_WEBHOOK_CLAIM_INDEX ?? 'kube';
  if (claimIndex !== 'kube' && claimIndex !== 'off') {
    throw new ConfigError(`--claim-index must be kube or off, got ${claimIndex}`);
  }
  const logLevel = flags.get('log-level') ?? env.CLAIMKIT_WEBHOOK_LOG_LEVEL ?? 'info';
  if (!isLogLevel(logLevel))
    throw new ConfigError(`invalid log level ${logLevel} (want one of ${LOG_LEVELS.join('|')})`);
  return {
    port,
    host: flags.get('host') ?? env.CLAIMKIT_WEBHOOK_HOST ?? '0.0.0.0',
    certFile: flags.get('tls-cert-file') ?? env.CLAIMKIT_WEBHOOK_TLS_CERT ?? '/tls/tls.crt',
    keyFile: flags.get('tls-private-key-file') ?? env.CLAIMKIT_WEBHOOK_TLS_KEY ?? '/tls/tls.key',
    controllerUsers: list(flags.get('controller-users') ?? env.CLAIMKIT_WEBHOOK_CONTROLLER_USERS) ?? [
      DEFAULT_CONTROLLER_USERNAME,
    ],
    controllerGroups: list(flags.get('controller-groups') ?? env.CLAIMKIT_WEBHOOK_CONTROLLER_GROUPS) ?? [],
    kubeconfig: flags.get('kubeconfig') ?? env.KUBECONFIG ?? '',
    claimIndex,
    logLevel,
  };
}
