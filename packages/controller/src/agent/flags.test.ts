import { describe, expect, it } from 'vitest';
import { AGENT_OPTIONS, AGENT_USAGE, agentStartup, parseAgentFlags } from './flags.ts';

const env = { NODE_IP: '10.0.0.7', NODE_NAME: 'node-7' };

describe('claimkit-capture-agent flags', () => {
  it('defaults: the kubelet capture on $NODE_IP:10250 with the ServiceAccount token, TLS verified', () => {
    expect(parseAgentFlags([], env)).toEqual({
      help: false,
      listen: { host: '0.0.0.0', port: 8750 },
      allowedCallers: [],
      logLevel: 'info',
      logFormat: 'json',
      capture: 'kubelet',
      durationMs: 2000,
      stateDir: '/var/lib/claimkit-agent/state',
      kubelet: {
        host: '10.0.0.7',
        port: 10250,
        tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
        insecureTLS: false,
        timeoutMs: 120_000,
        checkpointDir: '/var/lib/kubelet/checkpoints',
        storeDir: '/var/lib/claimkit-agent/archives',
        nodeName: 'node-7',
      },
    });
  });

  it('takes every flag', () => {
    const f = parseAgentFlags(
      [
        '--listen=127.0.0.1:9000',
        '--state-dir=/s',
        '--node-name=n1',
        '--kubelet-host=fd00::1',
        '--kubelet-port=10255',
        '--kubelet-token-file=/t',
        '--kubelet-ca=/ca.crt',
        '--kubelet-timeout=5m',
        '--checkpoint-dir=/host/ckpt',
        '--store-dir=/a',
      ],
      {},
    );
    expect(f).toMatchObject({
      listen: { host: '127.0.0.1', port: 9000 },
      stateDir: '/s',
      kubelet: {
        host: 'fd00::1',
        port: 10255,
        tokenFile: '/t',
        caFile: '/ca.crt',
        insecureTLS: false,
        timeoutMs: 300_000,
        checkpointDir: '/host/ckpt',
        storeDir: '/a',
        nodeName: 'n1',
      },
    });
    expect(parseAgentFlags(['--kubelet-insecure-tls'], env).kubelet.insecureTLS).toBe(true);
    expect(parseAgentFlags(['--listen', '[::1]:8750'], env).listen).toEqual({ host: '::1', port: 8750 });
  });

  it('--image-repository and the registry flags: the push options of the kubelet capture', () => {
    expect(
      parseAgentFlags(['--image-repository=registry.example.com:5000/claimkit/ckpt'], env).kubelet.image,
    ).toEqual({
      repository: 'registry.example.com:5000/claimkit/ckpt',
      insecureTLS: false,
      plainHTTP: false,
    });
    expect(
      parseAgentFlags(
        [
          '--image-repository',
          'localhost:5000/c',
          '--registry-ca=/ca.pem',
          '--registry-plain-http',
          '--registry-auth-file=/auth/config.json',
        ],
        env,
      ).kubelet.image,
    ).toEqual({
      repository: 'localhost:5000/c',
      caFile: '/ca.pem',
      insecureTLS: false,
      plainHTTP: true,
      authFile: '/auth/config.json',
    });
    expect(
      parseAgentFlags(['--image-repository=reg.example.com/c', '--registry-insecure-tls'], env).kubelet.image,
    ).toMatchObject({ insecureTLS: true });
    expect(parseAgentFlags([], env).kubelet.image).toBeUndefined();
  });

  it('the sleep capture only behind --capture=sleep', () => {
    expect(parseAgentFlags(['--capture=sleep', '--duration-ms', '50'], {})).toMatchObject({
      capture: 'sleep',
      durationMs: 50,
    });
    expect(() => parseAgentFlags(['--duration-ms', '50'], env)).toThrow(
      '--duration-ms: only with --capture=sleep',
    );
  });

  it('answers bad values with one line naming the flag', () => {
    for (const [argv, e, msg] of [
      [['--capture=docker'], env, '--capture: want one of kubelet|sleep, got "docker"'],
      [['--listen=8750'], env, '--listen: want host:port, got "8750"'],
      [['--kubelet-port=0'], env, '--kubelet-port: want an integer from 1 to 65535, got "0"'],
      [['--kubelet-timeout=soon'], env, '--kubelet-timeout: not a duration: "soon" (e.g. 30s, 5m, 1h30m)'],
      [['--kubelet-timeout=10ms'], env, '--kubelet-timeout: must be at least 100ms'],
      [['--capture=sleep', '--duration-ms=-1'], env, '--duration-ms: want an integer >= 0, got "-1"'],
      [['--capture=sleep', '--kubelet-ca=/x'], env, '--kubelet-ca: only with --capture=kubelet'],
      [
        ['--kubelet-ca=/x', '--kubelet-insecure-tls'],
        env,
        '--kubelet-ca and --kubelet-insecure-tls: give one of them',
      ],
      [
        ['--image-repository=Registry.example.com/Claimkit'],
        env,
        '--image-repository: not an image repository (path component "Claimkit" is not lowercase letters and digits joined by ".", "_", "__" or "-")',
      ],
      [
        ['--image-repository=claimkit/ckpt'],
        env,
        '--image-repository: not an image repository (the first component must be the registry host',
      ],
      [['--registry-ca=/ca.pem'], env, '--registry-ca: only with --image-repository'],
      [['--registry-plain-http'], env, '--registry-plain-http: only with --image-repository'],
      [
        ['--image-repository=r.example.com/c', '--registry-ca=/x', '--registry-insecure-tls'],
        env,
        '--registry-ca and --registry-insecure-tls: give one of them',
      ],
      [
        ['--capture=sleep', '--image-repository=r.example.com/c'],
        env,
        '--image-repository: only with --capture=kubelet',
      ],
      [
        ['--capture=sleep', '--registry-auth-file=/a'],
        env,
        '--registry-auth-file: only with --capture=kubelet',
      ],
      [[], { NODE_NAME: 'n' }, '--kubelet-host: required for --capture=kubelet ($NODE_IP is not set)'],
      [[], { NODE_IP: '10.0.0.1' }, '--node-name: required for --capture=kubelet ($NODE_NAME is not set)'],
      [['--state-dir='], env, '--state-dir: must not be empty'],
      [['--bogus'], env, 'unknown flag --bogus'],
      [['stray'], env, 'unexpected argument "stray"'],
    ] as const)
      expect(() => parseAgentFlags([...argv], e), argv.join(' ')).toThrow(
        expect.objectContaining({ name: 'UsageError', message: expect.stringContaining(msg) }),
      );
  });

  it('--help lists every flag, each with its default', () => {
    expect(parseAgentFlags(['--help'], {}).help).toBe(true); // even off a node
    for (const name of Object.keys(AGENT_OPTIONS)) {
      const line = AGENT_USAGE.split('\n').findIndex(
        (l) => l.includes(`--${name} `) || l.endsWith(`--${name}`),
      );
      expect(line, `--${name}`).toBeGreaterThan(0);
      if (name === 'help') continue;
      // The flag's description runs until the next flag's line; it names a default.
      const rest = AGENT_USAGE.split('\n').slice(line);
      const end = rest.slice(1).findIndex((l) => /^ {2}(-\w, | {4})--/.test(l));
      expect(rest.slice(0, end + 1).join(' '), `--${name}`).toMatch(/\(default\b/);
    }
  });

  it('every problem at once; the rules across flags; the environment is not a flag', () => {
    expect(() => parseAgentFlags(['--capture=sleep', '--kubelet-ca=/x', '--store-dir=/s'], env)).toThrow(
      '--kubelet-ca: only with --capture=kubelet; --store-dir: only with --capture=kubelet',
    );
    expect(() => parseAgentFlags([], {})).toThrow(
      '--kubelet-host: required for --capture=kubelet ($NODE_IP is not set); --node-name: required for --capture=kubelet ($NODE_NAME is not set)',
    );
    // $NODE_IP and $NODE_NAME are set on every node (the DaemonSet): the sleep capture ignores them.
    expect(parseAgentFlags(['--capture=sleep'], env).capture).toBe('sleep');
    expect(agentStartup(['--bogus', '--kubelet-port=x'], env)).toEqual({
      error:
        'claimkit-capture-agent: unknown flag --bogus; --kubelet-port: want an integer from 1 to 65535, got "x" (see --help)',
    });
    expect(agentStartup(['-h'], {})).toEqual({ help: AGENT_USAGE });
  });
});
