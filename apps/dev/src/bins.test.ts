// Every claimkit binary answers the same way: a usage error in one wording, and log lines in one
// shape. (Here because only the private apps may import every runtime package.)
import { run as claimctl } from '@claimkit/cli';
import {
  agentLogTo,
  agentStartup,
  jsonLogger as controllerLogger,
  controllerStartup,
} from '@claimkit/controller';
import { jsonLogger as webhookLogger, startup as webhookStartup } from '@claimkit/webhook';
import { describe, expect, it } from 'vitest';

async function claimctlErr(argv: string[]): Promise<string> {
  const err: string[] = [];
  const code = await claimctl(argv, {
    out: () => {},
    err: (t) => err.push(t),
    style: { red: String, green: String, yellow: String, bold: String, dim: String } as never,
    now: () => 0,
    env: {},
    connect: async () => {
      throw new Error('no cluster in this test');
    },
  });
  expect(code).toBe(2);
  return err.join('\n');
}

const NODE = { NODE_IP: '10.0.0.1', NODE_NAME: 'n1' };

describe('one usage-error wording for every binary', () => {
  it.each([
    [['--bogus'], 'unknown flag --bogus'],
    [['--bogus=1'], 'unknown flag --bogus'],
    [['stray'], 'unexpected argument "stray"'],
  ])('%j: <bin>: %s (see --help)', async (argv, problem) => {
    const lines = {
      controller: controllerStartup(argv, {}),
      agent: agentStartup(argv, NODE),
      webhook: webhookStartup(argv, {}),
    };
    expect(lines).toEqual({
      controller: { error: `claimkit-controller: ${problem} (see --help)` },
      agent: { error: `claimkit-capture-agent: ${problem} (see --help)` },
      webhook: { error: `claimkit-webhook: ${problem} (see --help)` },
    });
    // claimctl takes a command where the others take no argument; a command's flags point at its help.
    if (argv[0] === 'stray') return;
    expect(await claimctlErr(argv)).toBe(`claimctl: ${problem} (see --help)`);
    expect(await claimctlErr(['get', 'pc', ...argv])).toBe(`claimctl: ${problem} (see claimctl get --help)`);
  });

  it('a bad duration and a bad integer are worded alike, as is the duration syntax', async () => {
    expect(controllerStartup(['--sweep-interval=5x'], {})).toEqual({
      error: 'claimkit-controller: --sweep-interval: not a duration: "5x" (e.g. 30s, 5m, 1h30m) (see --help)',
    });
    expect(agentStartup(['--kubelet-timeout=5x'], NODE)).toEqual({
      error:
        'claimkit-capture-agent: --kubelet-timeout: not a duration: "5x" (e.g. 30s, 5m, 1h30m) (see --help)',
    });
    expect(await claimctlErr(['doctor', '--stuck-after=5x'])).toBe(
      'claimctl: --stuck-after: not a duration: "5x" (e.g. 30s, 5m, 1h30m) (see claimctl doctor --help)',
    );
    expect(controllerStartup(['--concurrency=x'], {})).toEqual({
      error: 'claimkit-controller: --concurrency: want an integer from 1 to 1000, got "x" (see --help)',
    });
    expect(webhookStartup(['--port=x'], {})).toEqual({
      error: 'claimkit-webhook: --port: want an integer from 0 to 65535, got "x" (see --help)',
    });
    expect(agentStartup(['--kubelet-port=x'], NODE)).toEqual({
      error: 'claimkit-capture-agent: --kubelet-port: want an integer from 1 to 65535, got "x" (see --help)',
    });
  });
});

describe('one log shape for every binary', () => {
  it('controller, webhook and capture agent write ts (RFC 3339, ms), level, msg, then the fields', () => {
    const lines: Record<string, string[]> = { controller: [], webhook: [], agent: [] };
    controllerLogger('info', (l) => lines.controller!.push(l))
      .with({ logger: 'x' })
      .warn('m', { a: 1 });
    webhookLogger('info', (l) => lines.webhook!.push(l))
      .with({ logger: 'x' })
      .warn('m', { a: 1 });
    agentLogTo(controllerLogger('info', (l) => lines.agent!.push(l)).with({ logger: 'x' }))({
      level: 'warn',
      msg: 'm',
      a: 1,
    });
    const shapes = Object.values(lines).map((ls) =>
      ls.map((l) => {
        const o = JSON.parse(l) as Record<string, unknown>;
        expect(o.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        return { keys: Object.keys(o), ...o, ts: '<ts>' };
      }),
    );
    expect(shapes[0]).toEqual([
      {
        keys: ['ts', 'level', 'msg', 'logger', 'a'],
        ts: '<ts>',
        level: 'warn',
        msg: 'm',
        logger: 'x',
        a: 1,
      },
    ]);
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[2]).toEqual(shapes[0]);
    // The agent's debug lines are dropped at info, as the others' are.
    agentLogTo(controllerLogger('info', (l) => lines.agent!.push(l)))({ level: 'debug', msg: 'quiet' });
    expect(lines.agent).toHaveLength(1);
  });

  it('is JSON unless --log-format text says otherwise, in every binary', () => {
    const formats = (argv: string[]) =>
      [controllerStartup(argv, {}), agentStartup(argv, NODE), webhookStartup(argv, {})].map((s) =>
        'config' in s ? s.config.logFormat : s,
      );
    expect(formats([])).toEqual(['json', 'json', 'json']);
    expect(formats(['--log-format=text'])).toEqual(['text', 'text', 'text']);
    const text: string[] = [];
    controllerLogger('info', (l) => text.push(l), undefined, 'text').info('caches synced', { a: 1 });
    webhookLogger('info', (l) => text.push(l), undefined, 'text').info('caches synced', { a: 1 });
    expect(text.map((l) => l.replace(/^ts=\S+ /, ''))).toEqual([
      'level=info msg="caches synced" a=1',
      'level=info msg="caches synced" a=1',
    ]);
  });
});
