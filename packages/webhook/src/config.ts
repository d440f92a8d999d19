// Configuration shared by the Node and Deno entries: flags first, then environment variables.
// Pure: the entry passes its argv and environment in.

import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '@claimkit/core';
import {
  defineOptions,
  helpText,
  type OptionValues,
  startup as optionsStartup,
  parseOptions,
} from '@claimkit/core/options';
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
  logFormat: LogFormat;
}

/** The webhook's options: one table for parsing, --help and validation (flags over environment). */
export const WEBHOOK_OPTIONS = defineOptions({
  port: {
    type: 'int',
    min: 0,
    max: 65535,
    default: 8443,
    env: 'CLAIMKIT_WEBHOOK_PORT',
    help: 'listen port',
  },
  host: {
    type: 'string',
    arg: 'ADDR',
    default: '0.0.0.0',
    env: 'CLAIMKIT_WEBHOOK_HOST',
    help: 'listen address',
  },
  'tls-cert-file': {
    type: 'string',
    arg: 'PATH',
    default: '/tls/tls.crt',
    env: 'CLAIMKIT_WEBHOOK_TLS_CERT',
    help: 'PEM certificate',
  },
  'tls-private-key-file': {
    type: 'string',
    arg: 'PATH',
    default: '/tls/tls.key',
    env: 'CLAIMKIT_WEBHOOK_TLS_KEY',
    help: 'PEM key',
  },
  'controller-users': {
    type: 'list',
    allowEmpty: true,
    default: [DEFAULT_CONTROLLER_USERNAME],
    env: 'CLAIMKIT_WEBHOOK_CONTROLLER_USERS',
    help: 'comma-separated usernames allowed to write claim spec podName/nodeName/sourcePod',
  },
  'controller-groups': {
    type: 'list',
    allowEmpty: true,
    env: 'CLAIMKIT_WEBHOOK_CONTROLLER_GROUPS',
    help: 'comma-separated groups with the same right',
  },
  kubeconfig: {
    type: 'string',
    arg: 'PATH',
    allowEmpty: true,
    env: 'KUBECONFIG',
    defaultText: 'in-cluster',
    help: 'kubeconfig for the PodClaim watch',
  },
  'claim-index': {
    type: 'enum',
    values: ['kube', 'off'],
    default: 'kube',
    env: 'CLAIMKIT_WEBHOOK_CLAIM_INDEX',
    help: 'watch PodClaims (kube) or skip pod-reference checks (off)',
  },
  'log-level': {
    type: 'enum',
    values: LOG_LEVELS,
    default: 'info',
    env: 'CLAIMKIT_WEBHOOK_LOG_LEVEL',
    help: 'the least level logged',
  },
  'log-format': {
    type: 'enum',
    values: LOG_FORMATS,
    default: 'json',
    env: 'CLAIMKIT_WEBHOOK_LOG_FORMAT',
    help: 'json: one object per line; text: the same keys as logfmt',
  },
});

const HELP = {
  usage: 'usage: claimkit-webhook [flags]: the claimkit admission webhook (HTTPS only)',
  footer: `Certificates are reloaded when their files change.
Logs: one JSON object per line on stdout ({"ts","level","msg",...}), or logfmt with --log-format text.`,
};

export const CONFIG_HELP = helpText(WEBHOOK_OPTIONS, HELP).trimEnd();

/** A configuration the webhook cannot start with (its TLS files); the message is one line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** What an entry does with its arguments: print the help, fail on bad input, or run. */
export type Startup = { help: string } | { error: string } | { config: WebhookConfig };

function configFrom(v: OptionValues<typeof WEBHOOK_OPTIONS>): WebhookConfig {
  return {
    port: v.port,
    host: v.host,
    certFile: v['tls-cert-file'],
    keyFile: v['tls-private-key-file'],
    controllerUsers: v['controller-users'],
    controllerGroups: v['controller-groups'],
    kubeconfig: v.kubeconfig ?? '',
    claimIndex: v['claim-index'],
    logLevel: v['log-level'],
    logFormat: v['log-format'],
  };
}

/**
 * The entries' start-up decision: `--help` is printed to stdout (exit 0); a bad flag or value is one
 * line on stderr naming every problem and pointing at `--help` (exit 2), never the whole usage.
 */
export function startup(argv: readonly string[], env: Record<string, string | undefined>): Startup {
  return optionsStartup('claimkit-webhook', WEBHOOK_OPTIONS, HELP, argv, env, configFrom);
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

/** The configuration from flags, then environment variables, then defaults (a UsageError if bad). */
export function parseConfig(argv: readonly string[], env: Record<string, string | undefined>): WebhookConfig {
  return configFrom(parseOptions(WEBHOOK_OPTIONS, argv, env).values);
}
