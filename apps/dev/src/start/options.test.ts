import { describe, expect, it } from 'vitest';
import { startStartup } from './options.ts';

describe('npm start options', () => {
  it('logs at warn unless --log-level or CLAIMKIT_LOG_LEVEL says otherwise (the flag first)', () => {
    expect(startStartup([], {})).toEqual({ config: { logLevel: 'warn' } });
    expect(startStartup([], { CLAIMKIT_LOG_LEVEL: 'debug' })).toEqual({ config: { logLevel: 'debug' } });
    expect(startStartup(['--log-level=error'], { CLAIMKIT_LOG_LEVEL: 'debug' })).toEqual({
      config: { logLevel: 'error' },
    });
  });

  it("refuses a level it does not know, or anything else, in core's one wording", () => {
    expect(startStartup([], { CLAIMKIT_LOG_LEVEL: 'loud' })).toEqual({
      error:
        'npm start: $CLAIMKIT_LOG_LEVEL (--log-level): want one of debug|info|warn|error, got "loud" (see --help)',
    });
    expect(startStartup(['--log-level', 'loud'], {})).toEqual({
      error: 'npm start: --log-level: want one of debug|info|warn|error, got "loud" (see --help)',
    });
    expect(startStartup(['--bogus'], {})).toEqual({ error: 'npm start: unknown flag --bogus (see --help)' });
    expect(startStartup(['stray'], {})).toEqual({
      error: 'npm start: unexpected argument "stray" (see --help)',
    });
  });

  it('--help: the usage and the flag with its default and variable', () => {
    const s = startStartup(['-h'], { CLAIMKIT_LOG_LEVEL: 'loud' });
    if (!('help' in s)) throw new Error('no help');
    expect(s.help).toMatch(/^usage: npm start \[-- flags\]\n/);
    expect(s.help).toMatch(
      /--log-level debug\|info\|warn\|error\s+the least level [^(]*\(stderr\)\s+\(default warn, env CLAIMKIT_LOG_LEVEL\)$/m,
    );
    for (const line of s.help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
  });
});
