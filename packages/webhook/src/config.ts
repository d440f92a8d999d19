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

export class ConfigError extends Error {}

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
    if (a === '--help' || a === '-h') throw new ConfigError(CONFIG_HELP);
    if (!a.startsWith('--'))
      throw new ConfigError(`unexpected argument ${JSON.stringify(a)}\n\n${CONFIG_HELP}`);
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    if (!KNOWN_FLAGS.includes(name)) throw new ConfigError(`unknown flag --${name}\n\n${CONFIG_HELP}`);
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
