import { describe, expect, it } from 'vitest';
import {
  camelValues,
  configOrExit,
  defineOptions,
  formatDuration,
  helpText,
  optionLines,
  parseDuration,
  parseOptions,
  startup,
  tokenize,
  UsageError,
  usageLine,
} from './options.ts';

const table = defineOptions({
  namespace: { type: 'string', short: 'n', help: 'one namespace', arg: 'NS' },
  port: { type: 'int', min: 0, max: 65535, default: 8443, env: 'X_PORT', help: 'listen port' },
  sweep: { type: 'duration', min: 100, default: 30_000, help: 'sweep period' },
  level: { type: 'enum', values: ['debug', 'info'] as const, default: 'info', help: 'log level' },
  users: { type: 'list', default: ['ctl'], env: 'X_USERS', help: 'users' },
  watch: { type: 'bool', negatable: true, default: true, help: 'watch nodes' },
  elect: { type: 'bool', help: 'leader election' },
  even: {
    type: 'int',
    default: 2,
    help: 'an even number',
    validate: (n: number) => (n % 2 ? 'not even' : undefined),
  },
});

describe('parseDuration (one syntax for every binary)', () => {
  it.each([
    ['300ms', 300],
    ['1.5s', 1500],
    ['2m', 120_000],
    ['1h30m', 5_400_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['15', 15_000],
    ['0', 0],
  ])('%s is %i ms', (s, ms) => expect(parseDuration(s)).toBe(ms));

  it.each(['', 'soon', '5 minutes', '5x', '1h 30m', '-1s', 'm5'])('%j is refused with examples', (s) => {
    expect(() => parseDuration(s)).toThrow(`not a duration: ${JSON.stringify(s)} (e.g. 30s, 5m, 1h30m)`);
  });

  it('formatDuration is read back by parseDuration', () => {
    for (const ms of [0, 1, 500, 1000, 15_000, 30_000, 90_000, 600_000, 5_400_000, 7_200_500])
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    expect([30_000, 600_000, 5_400_000, 500].map(formatDuration)).toEqual(['30s', '10m', '1h30m', '500ms']);
  });
});

describe('parseOptions', () => {
  it('typed values: flags over the environment over the defaults', () => {
    const r = parseOptions(table, ['-n', 'a', '--sweep=1m', '--no-watch', '--elect', '--users', 'x, y,'], {
      X_PORT: '9443',
      X_USERS: 'ignored',
    });
    expect(r.values).toEqual({
      namespace: 'a',
      port: 9443,
      sweep: 60_000,
      level: 'info',
      users: ['x', 'y'],
      watch: false,
      elect: true,
      even: 2,
    });
    expect([...r.given].sort()).toEqual(['elect', 'namespace', 'sweep', 'users', 'watch']); // not $X_PORT
    expect(parseOptions(table, [], {}).values).toMatchObject({
      namespace: undefined,
      watch: true,
      elect: false,
    });
    expect(parseOptions(table, ['-nb', '--watch=true'], {}).values).toMatchObject({
      namespace: 'b',
      watch: true,
    });
  });

  it('lists every problem in one UsageError of one line, each naming its flag', () => {
    let err: unknown;
    try {
      parseOptions(
        table,
        ['--foo', '--sweep', '5x', '--level=loud', 'stray', '--port', '70000', '--even=3'],
        {},
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).problems).toEqual([
      'unknown flag --foo',
      'unexpected argument "stray"',
      '--port: want an integer from 0 to 65535, got "70000"',
      '--sweep: not a duration: "5x" (e.g. 30s, 5m, 1h30m)',
      '--level: want one of debug|info, got "loud"',
      '--even: not even',
    ]);
    expect((err as Error).message).not.toContain('\n');
    expect(usageLine('bin', err as UsageError)).toBe(
      `bin: ${(err as UsageError).problems.join('; ')} (see --help)`,
    );
  });

  it.each([
    [['-x'], 'unknown flag -x'],
    [['--no-elect'], 'unknown flag --no-elect'],
    [['--no-watch=1'], '--no-watch: takes no value'],
    [['--elect=maybe'], '--elect: want true or false, got "maybe"'],
    [['--namespace'], '--namespace: needs a value'],
    [['--namespace='], '--namespace: must not be empty'],
    [['--sweep=10ms'], '--sweep: must be at least 100ms'],
  ])('%j: %s', (argv, problem) => {
    expect(() => parseOptions(table, argv, {})).toThrow(new UsageError(problem));
  });

  it('names the environment variable a bad value came from', () => {
    expect(() => parseOptions(table, [], { X_PORT: 'x' })).toThrow(
      '$X_PORT (--port): want an integer from 0 to 65535, got "x"',
    );
  });

  it('--help wins over every problem; checks run only on otherwise good input', () => {
    expect(parseOptions(table, ['--foo', '-h', '--port=x'], {}).help).toBe(true);
    const checks = () => ['--elect: needs --namespace'];
    expect(() => parseOptions(table, ['--elect'], {}, { checks })).toThrow('--elect: needs --namespace');
    expect(() => parseOptions(table, ['--foo'], {}, { checks })).toThrow(
      new UsageError('unknown flag --foo'),
    );
  });

  it('a repeatable list takes one item per flag, each as given; a plain list, the last one', () => {
    const pass = defineOptions({
      arg: { type: 'list', repeatable: true, env: 'X_ARG', help: 'passed through' },
      users: table.users,
    });
    const r = parseOptions(pass, ['--arg=--a=1,2', '--users', 'x', '--arg', '--b', '--users=y,z'], {});
    expect(r.values).toEqual({ arg: ['--a=1,2', '--b'], users: ['y', 'z'] });
    expect([...r.given]).toEqual(['arg', 'users']);
    expect(parseOptions(pass, [], { X_ARG: '--c=3,4' }).values.arg).toEqual(['--c=3,4']);
    expect(parseOptions(pass, [], {}).values.arg).toEqual([]);
    expect(() => parseOptions(pass, ['--arg', 'a', '--arg='], {})).toThrow(
      new UsageError('--arg: must not be empty'),
    );
    expect(helpText(pass, { usage: 'u' })).toMatch(/--arg LIST +passed through \(repeatable, env X_ARG\)$/m);
  });

  it('tokenize keeps positionals and -- when asked', () => {
    expect(tokenize(table, ['get', '-n', 'a', '--', '-z'], { positionals: true })).toEqual({
      flags: { namespace: 'a' },
      repeated: {},
      positionals: ['get', '-z'],
      help: false,
      problems: [],
    });
  });
});

describe('helpText', () => {
  const text = helpText(table, { usage: 'usage: bin [flags]', footer: 'the end' });
  it('one entry per option with its placeholder, env var and default, then -h and the footer', () => {
    const lines = text.split('\n');
    expect(lines[0]).toBe('usage: bin [flags]');
    expect(text).toMatch(/^ {2}-n, --namespace NS +one namespace$/m);
    expect(text).toMatch(/--port N +listen port \(default 8443, env X_PORT\)$/m);
    expect(text).toMatch(/--sweep DUR +sweep period \(default 30s\)$/m);
    expect(text).toMatch(/--level debug\|info +log level \(default info\)$/m);
    expect(text).toMatch(/--\[no-\]watch +watch nodes \(default true\)$/m);
    expect(text).toMatch(/--elect +leader election \(default false\)$/m);
    expect(text).toMatch(/^ {2}-h, --help +this help$/m);
    expect(text.endsWith('the end\n')).toBe(true);
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(100);
  });

  it('optionLines: the entries alone, at a given column, for help texts written around them', () => {
    expect(optionLines({ a: table.namespace, b: table.elect }, { col: 20 })).toBe(
      ['  -n, --a NS          one namespace', '      --b             leader election (default false)'].join(
        '\n',
      ),
    );
  });

  it('startup: help, one usage line, or the configuration', () => {
    const run = (argv: string[]) => startup('bin', table, { usage: 'usage: bin' }, argv, {}, (v) => v.port);
    expect(run(['--help'])).toEqual({ help: helpText(table, { usage: 'usage: bin' }) });
    expect(run(['--bogus'])).toEqual({ error: 'bin: unknown flag --bogus (see --help)' });
    expect(run(['--port=1'])).toEqual({ config: 1 });
  });

  it('startup: build gets the positionals, and its usage errors are worded as the others', () => {
    const run = (argv: string[]) =>
      startup(
        'bin',
        table,
        { usage: 'usage: bin NAME' },
        argv,
        {},
        (v, _given, [name, ...extra]) => {
          if (name === undefined || extra.length > 0) throw new UsageError('want one NAME');
          return { name, port: v.port };
        },
        { positionals: true },
      );
    expect(run(['a', '--port=1'])).toEqual({ config: { name: 'a', port: 1 } });
    expect(run([])).toEqual({ error: 'bin: want one NAME (see --help)' });
    expect(run(['a', 'b'])).toEqual({ error: 'bin: want one NAME (see --help)' });
  });

  it('configOrExit: the help on stdout (0), the usage line on stderr (2), else the configuration', () => {
    const said: string[] = [];
    class Exit extends Error {}
    const io = {
      stdout: { write: (t: string) => said.push(`out:${t}`) },
      stderr: { write: (t: string) => said.push(`err:${t}`) },
      exit: (code: number): never => {
        throw new Exit(String(code));
      },
    };
    expect(() => configOrExit({ help: 'usage\n' }, io)).toThrow(new Exit('0'));
    expect(() => configOrExit({ error: 'bin: unknown flag --x (see --help)' }, io)).toThrow(new Exit('2'));
    expect(said).toEqual(['out:usage\n', 'err:bin: unknown flag --x (see --help)\n']);
    expect(configOrExit({ config: 7 }, io)).toBe(7);
  });
});

describe('camelValues (a binary config is the table under camelCase names)', () => {
  it('renames every option, keeps typed values and leaves unset ones out', () => {
    const table = defineOptions({
      'max-concurrency': { type: 'int', default: 32, help: 'h' },
      'sweep-interval': { type: 'duration', default: 30_000, help: 'h' },
      'watch-nodes': { type: 'bool', negatable: true, default: true, help: 'h' },
      kubeconfig: { type: 'string', help: 'h' },
    });
    const { values } = parseOptions(table, ['--sweep-interval', '5s', '--no-watch-nodes']);
    const c = camelValues(values);
    expect(c).toEqual({ maxConcurrency: 32, sweepInterval: 5000, watchNodes: false });
    expect('kubeconfig' in c).toBe(false);
  });
});
