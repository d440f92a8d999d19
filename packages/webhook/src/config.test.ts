import { UsageError } from '@claimkit/core/options';
import { describe, expect, it } from 'vitest';
import { CONFIG_HELP, ConfigError, parseConfig, readTlsPair, startError, startup } from './config.ts';

describe('startup', () => {
  it('asks for the help text on --help or -h, wherever it stands', () => {
    expect(startup(['--help'], {})).toEqual({ help: `${CONFIG_HELP}\n` });
    expect(startup(['--port', '1', '-h'], {})).toEqual({ help: `${CONFIG_HELP}\n` });
  });

  it.each([
    [['--bogus'], 'claimkit-webhook: unknown flag --bogus (see --help)'],
    [['--bogus=1'], 'claimkit-webhook: unknown flag --bogus (see --help)'],
    [['serve'], 'claimkit-webhook: unexpected argument "serve" (see --help)'],
    [['--port'], 'claimkit-webhook: --port: needs a value (see --help)'],
    [
      ['--port', '70000'],
      'claimkit-webhook: --port: want an integer from 0 to 65535, got "70000" (see --help)',
    ],
    [
      ['--claim-index', 'etcd'],
      'claimkit-webhook: --claim-index: want one of kube|off, got "etcd" (see --help)',
    ],
  ])('answers %j with one line: %s', (argv, line) => {
    const r = startup(argv, {});
    expect(r).toEqual({ error: line });
    expect(line).not.toContain('\n');
  });

  it('returns the configuration, flags over environment', () => {
    const r = startup(['--port', '9443', '--claim-index=off'], {
      CLAIMKIT_WEBHOOK_PORT: '1',
      CLAIMKIT_WEBHOOK_TLS_CERT: '/c/tls.crt',
    });
    expect(r).toEqual({
      config: expect.objectContaining({ port: 9443, claimIndex: 'off', certFile: '/c/tls.crt' }),
    });
  });

  it('lets an unexpected error through (a bug, not bad input)', () => {
    expect(() =>
      startup(['--port', '1'], {
        get CLAIMKIT_WEBHOOK_HOST(): string {
          throw new TypeError('boom');
        },
      }),
    ).toThrow(TypeError);
  });
});

describe('readTlsPair', () => {
  const files: Record<string, string> = { '/tls/tls.crt': 'CERT', '/tls/tls.key': 'KEY' };
  const read = async (path: string) => {
    const v = files[path];
    if (v === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'\n    at stack`);
    return v;
  };

  it('reads both files', async () => {
    await expect(readTlsPair({ certFile: '/tls/tls.crt', keyFile: '/tls/tls.key' }, read)).resolves.toEqual({
      cert: 'CERT',
      key: 'KEY',
    });
  });

  it('names the flag, the path and the first line of the reason', async () => {
    await expect(readTlsPair({ certFile: '/x/tls.crt', keyFile: '/tls/tls.key' }, read)).rejects.toThrow(
      new ConfigError(
        "cannot read the TLS certificate /x/tls.crt (--tls-cert-file): ENOENT: no such file or directory, open '/x/tls.crt'",
      ),
    );
    await expect(readTlsPair({ certFile: '/tls/tls.crt', keyFile: '/x/tls.key' }, read)).rejects.toThrow(
      /^cannot read the TLS private key \/x\/tls.key \(--tls-private-key-file\): ENOENT/,
    );
  });
});

describe('startError', () => {
  it('is one line whatever the error', () => {
    expect(
      startError(new Error('listen EADDRINUSE: address already in use\n    at Server.setupListenHandle')),
    ).toBe('claimkit-webhook: listen EADDRINUSE: address already in use');
    expect(startError('plain')).toBe('claimkit-webhook: plain');
  });
});

describe('parseConfig', () => {
  it('throws a UsageError for bad input, naming the flag or the environment variable', () => {
    expect(() => parseConfig(['--log-level', 'loud'], {})).toThrow(UsageError);
    expect(() => parseConfig([], { CLAIMKIT_WEBHOOK_PORT: 'x' })).toThrow(
      '$CLAIMKIT_WEBHOOK_PORT (--port): want an integer from 0 to 65535, got "x"',
    );
  });

  it('the defaults, and every option in the help with its environment variable', () => {
    expect(parseConfig([], {})).toEqual({
      port: 8443,
      host: '0.0.0.0',
      certFile: '/tls/tls.crt',
      keyFile: '/tls/tls.key',
      controllerUsers: ['system:serviceaccount:claimkit-system:claimkit-controller'],
      controllerGroups: [],
      kubeconfig: '',
      claimIndex: 'kube',
      logLevel: 'info',
      logFormat: 'json',
    });
    expect(parseConfig([], { CLAIMKIT_WEBHOOK_LOG_FORMAT: 'text' }).logFormat).toBe('text');
    expect(parseConfig(['--controller-users', 'a, b', '--kubeconfig='], { KUBECONFIG: '/k' })).toMatchObject({
      controllerUsers: ['a', 'b'],
      kubeconfig: '',
    });
    expect(CONFIG_HELP).toContain('--tls-cert-file PATH');
    expect(CONFIG_HELP).toMatch(/--port N +listen port \(default 8443, env CLAIMKIT_WEBHOOK_PORT\)/);
  });
});
