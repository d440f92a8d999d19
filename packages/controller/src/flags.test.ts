import { describe, expect, it } from 'vitest';
import { CONTROLLER_DEFAULTS } from './defaults.ts';
import {
  CONTROLLER_OPTIONS,
  controllerDefaults,
  controllerStartup,
  parseAddr,
  parseDuration,
  parseFlags,
  USAGE,
  UsageError,
} from './flags.ts';

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
      sweepInterval: 60_000,
      requestTimeout: 3000,
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

  it('--disable-claim-events (agent-sandbox’s name): off by default, on by the flag, passed to the controller', () => {
    expect(parseFlags([], {}).disableClaimEvents).toBe(false);
    expect(controllerDefaults().disableClaimEvents).toBe(false);
    const on = parseFlags(['--disable-claim-events'], {});
    expect(on.disableClaimEvents).toBe(true);
    expect(parseFlags(['--disable-claim-events=true'], {}).disableClaimEvents).toBe(true);
    expect(parseFlags(['--disable-claim-events=false'], {}).disableClaimEvents).toBe(false);
    // The last one given wins, as for every flag (the chart's extraArgs come after its own).
    expect(
      parseFlags(['--disable-claim-events', '--disable-claim-events=false'], {}).disableClaimEvents,
    ).toBe(false);
  });

  it('--shard INDEX/COUNT (or $CLAIMKIT_SHARD): one shard by default', () => {
    expect(parseFlags([], {}).shard).toEqual({ index: 0, count: 1 });
    const s = parseFlags(['--shard', '2/3'], {});
    expect(s.shard).toEqual({ index: 2, count: 3 });
    expect(parseFlags([], { CLAIMKIT_SHARD: '1/2' }).shard).toEqual({ index: 1, count: 2 });
    expect(parseFlags(['--shard=0/2'], { CLAIMKIT_SHARD: '1/2' }).shard).toEqual({ index: 0, count: 2 });
  });

  it.each([
    [['--bogus'], /^unknown flag --bogus$/],
    [
      ['--shard', '3/3'],
      /^--shard: want INDEX\/COUNT with 0 <= INDEX < COUNT <= 256, e\.g\. 0\/1 or 2\/3, got "3\/3"$/,
    ],
    [['--shard', 'two'], /^--shard: want INDEX\/COUNT/],
    [['--concurrency', '0'], /--concurrency/],
    [['--concurrency', 'x'], /--concurrency/],
    [['--max-concurrency', '0'], /^--max-concurrency: want an integer from 1 to 1000, got "0"$/],
    [['--sweep-interval', 'soon'], /--sweep-interval/],
    [['--request-timeout', 'never'], /--request-timeout/],
    [['--request-timeout', '5ms'], /--request-timeout: must be at least 100ms/],
    [['--log-level', 'loud'], /--log-level/],
    [['--metrics-addr', 'nope'], /--metrics-addr/],
    [['--otlp-endpoint', 'ftp://collector:4318'], /^--otlp-endpoint: want an http\(s\) URL/],
    [['--namespace', ''], /--namespace/],
    [['--disable-claim-events=yes'], /^--disable-claim-events: want true or false, got "yes"$/],
    [['--no-disable-claim-events'], /^unknown flag --no-disable-claim-events$/],
    [['stray'], /^unexpected argument "stray"$/],
    [['--sweep-interval', '5x'], /^--sweep-interval: not a duration: "5x" \(e\.g\. 30s, 5m, 1h30m\)$/],
  ])('%j is a one-line UsageError', (argv, re) => {
    let err: unknown;
    try {
      parseFlags(argv as string[], {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
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

  it('every problem at once, in one line', () => {
    expect(() => parseFlags(['--bogus', '--concurrency', '0', '--log-level=loud'], {})).toThrow(
      new UsageError([
        'unknown flag --bogus',
        '--concurrency: want an integer from 1 to 1000, got "0"',
        '--log-level: want one of debug|info|warn|error, got "loud"',
      ]),
    );
  });

  it('the shipped defaults come from the table, and in-process controllers read the same', () => {
    const d = controllerDefaults();
    expect(d).toMatchObject({
      concurrency: 8,
      sweepInterval: 30_000,
      requestTimeout: 15_000,
      resyncInterval: 600_000,
      poolCoalesce: 500,
      poolCoalesceHeadroom: 2000,
      shutdownGrace: 20_000,
      doctorInterval: 60_000,
      leaseNamespace: 'claimkit-system',
      metricsAddr: ':8080',
      healthAddr: ':8081',
      logLevel: 'info',
      logFormat: 'json',
      watchNodes: true,
      leaderElect: false,
      otlpServiceName: 'claimkit-controller',
      disableClaimEvents: false,
    });
    expect(d.otlpEndpoint).toBeUndefined();
    expect(d).toMatchObject(CONTROLLER_DEFAULTS);
    expect(
      parseFlags(
        ['--resync-interval=0', '--pool-coalesce=1s', '--pool-coalesce-headroom=0', '--shutdown-grace=5s'],
        {},
      ),
    ).toMatchObject({ resyncInterval: 0, poolCoalesce: 1000, poolCoalesceHeadroom: 0, shutdownGrace: 5000 });
  });

  it('--help is generated from the table: every flag, with its default', () => {
    for (const name of Object.keys(CONTROLLER_OPTIONS))
      expect(USAGE, name).toMatch(new RegExp(`--(\\[no-\\])?${name}\\b`));
    expect(USAGE).toMatch(/--concurrency N +reconcile workers \(default 8\)/);
    expect(USAGE).toMatch(
      /--max-concurrency N +reconcile workers while the queue backs up[\s\S]*?\(default 32\)/,
    );
    expect(USAGE).toMatch(/--sweep-interval DUR +capture recovery sweep period \(default 30s\)/);
    expect(USAGE).toMatch(/--request-timeout DUR [^-]*\(default 15s\)/);
    expect(USAGE).toMatch(/--disable-claim-events +write no Normal Events about PodClaims/);
    expect(controllerStartup(['--help', '--bogus'], {})).toEqual({ help: USAGE });
    expect(controllerStartup(['--bogus'], {})).toEqual({
      error: 'claimkit-controller: unknown flag --bogus (see --help)',
    });
  });
});
