import { describe, expect, it } from 'vitest';
import { createLogger, LOG_LEVELS, parseLogLevel, silentLogger } from './log.ts';

const T0 = Date.UTC(2026, 0, 1);

function capture(level?: (typeof LOG_LEVELS)[number]) {
  const lines: string[] = [];
  const log = createLogger({ ...(level ? { level } : {}), write: (l) => lines.push(l), now: () => T0 });
  return { log, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes one JSON object per line: ts, level, msg, then the fields', () => {
    const { log, lines } = capture();
    log.info('caches synced', { objects: { Pod: 3 } });
    expect(lines).toEqual([
      '{"ts":"2026-01-01T00:00:00.000Z","level":"info","msg":"caches synced","objects":{"Pod":3}}',
    ]);
    expect(lines[0]).not.toContain('\n');
  });

  it('drops lines below its level (default info)', () => {
    const { log, parsed } = capture();
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(parsed().map((l) => l.level)).toEqual(['info', 'warn', 'error']);
    const quiet = capture('error');
    quiet.log.warn('w');
    quiet.log.error('e');
    expect(quiet.parsed().map((l) => l.msg)).toEqual(['e']);
  });

  it('with() adds fields to every line; a call’s own fields win; the parent is unchanged', () => {
    const { log, parsed } = capture('debug');
    const child = log.with({ logger: 'claimkit-controller', kind: 'Pod' });
    child.with({ name: 'p1' }).debug('reconciled', { kind: 'PodClaim' });
    log.info('plain');
    expect(parsed()).toEqual([
      {
        ts: '2026-01-01T00:00:00.000Z',
        level: 'debug',
        msg: 'reconciled',
        logger: 'claimkit-controller',
        kind: 'PodClaim',
        name: 'p1',
      },
      { ts: '2026-01-01T00:00:00.000Z', level: 'info', msg: 'plain' },
    ]);
  });

  it('never lets a field replace ts, level or msg, and never throws on odd fields', () => {
    const { log, parsed } = capture();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    log.warn('m', { level: 'debug', msg: 'other', ts: 0, error: new Error('boom'), n: 10n });
    expect(() => log.error('cyclic', { cyclic })).not.toThrow();
    const [odd, cyc] = parsed();
    expect(odd).toEqual({
      ts: '2026-01-01T00:00:00.000Z',
      level: 'warn',
      msg: 'm',
      error: 'boom',
      n: '10',
    });
    expect(cyc).toMatchObject({ level: 'error', msg: 'cyclic', logError: expect.stringMatching(/serialis/) });
  });

  it('text format: the same keys in the same order as logfmt, values quoted only when they must be', () => {
    const lines: string[] = [];
    const log = createLogger({ format: 'text', write: (l) => lines.push(l), now: () => T0 });
    log.with({ logger: 'claimkit-controller' }).info('caches synced', {
      objects: { Pod: 3 },
      ok: true,
      n: 2,
      empty: '',
      error: new Error('a "quoted" failure'),
      gone: undefined,
      bell: 'a\u0007b',
      msg: 'never replaces msg',
    });
    expect(lines).toEqual([
      'ts=2026-01-01T00:00:00.000Z level=info msg="caches synced" logger=claimkit-controller ' +
        'objects="{\\"Pod\\":3}" ok=true n=2 empty="" error="a \\"quoted\\" failure" bell="a\\u0007b"',
    ]);
  });

  it('silentLogger writes nothing, also through with()', () => {
    expect(silentLogger.with({ a: 1 })).toBe(silentLogger);
    expect(() => silentLogger.error('x')).not.toThrow();
  });
});

describe('parseLogLevel', () => {
  it('accepts the four levels and names them when refusing', () => {
    for (const l of LOG_LEVELS) expect(parseLogLevel(l)).toBe(l);
    expect(() => parseLogLevel('verbose')).toThrow(
      'invalid log level "verbose": want one of debug|info|warn|error',
    );
  });
});
