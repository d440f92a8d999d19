import { describe, expect, it } from 'vitest';
import { FlagError, parseAddr, parseDuration, parseFlags } from './flags.ts';

describe('flags', () => {
  it('parses the flags of DESIGN.md with defaults', () => {
    const f = parseFlags(
      [
        '--namespace',
        'ns',
        '--leader-elect',
        '--concurrency',
        '8',
        '--sweep-interval',
        '1m',
        '--request-timeout',
        '3s',
        '--log-level',
        'debug',
      ],
      { POD_NAME: 'ctl-0', POD_NAMESPACE: 'claimkit-system' },
    );
    expect(f).toMatchObject({
      namespace: 'ns',
      leaderElect: true,
      concurrency: 8,
      sweepIntervalMs: 60_000,
      requestTimeoutMs: 3000,
      logLevel: 'debug',
      identity: 'ctl-0',
      leaseNamespace: 'claimkit-system',
      metricsAddr: ':8080',
      healthAddr: ':8081',
      watchNodes: true,
    });
  });

  it('the pod and container it runs in, from the downward API env (all of name, namespace, uid, or none)', () => {
    const env = { POD_NAME: 'ctl-0', POD_NAMESPACE: 'claimkit-system', POD_UID: 'u-1' };
    expect(parseFlags([], { ...env, CONTAINER_NAME: 'controller' }).pod).toEqual({
      namespace: 'claimkit-system',
      name: 'ctl-0',
      uid: 'u-1',
      container: 'controller',
    });
    expect(parseFlags([], env).pod).toEqual({ namespace: 'claimkit-system', name: 'ctl-0', uid: 'u-1' });
    expect(parseFlags([], { POD_NAME: 'ctl-0', POD_NAMESPACE: 'claimkit-system' }).pod).toBeUndefined();
    expect(parseFlags([], {}).pod).toBeUndefined();
  });

  it('--no-watch-nodes (and --watch-nodes) for installs without a cluster-wide Node read', () => {
    expect(parseFlags(['--no-watch-nodes'], {}).watchNodes).toBe(false);
    expect(parseFlags(['--watch-nodes'], {}).watchNodes).toBe(true);
    expect(parseFlags([], {}).watchNodes).toBe(true);
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--concurrency', '0'], /--concurrency/],
    [['--concurrency', 'x'], /--concurrency/],
    [['--sweep-interval', 'soon'], /--sweep-interval/],
    [['--request-timeout', 'never'], /--request-timeout/],
    [['--request-timeout', '5ms'], /--request-timeout: must be at least 100ms/],
    [['--log-level', 'loud'], /--log-level/],
    [['--metrics-addr', 'nope'], /--metrics-addr/],
    [['--namespace', ''], /--namespace/],
    [['stray'], /positional|Unexpected/i],
  ])('%j is a one-line FlagError', (argv, re) => {
    let err: unknown;
    try {
      parseFlags(argv as string[], {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FlagError);
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message).not.toContain('\n');
  });

  it('durations and addresses', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('15')).toBe(15_000);
    expect(parseAddr('x', ':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseAddr('x', '[::1]:9')).toEqual({ host: '::1', port: 9 });
    expect(parseAddr('x', '0')).toBeUndefined();
  });
});
