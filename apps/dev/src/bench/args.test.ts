import { resolve } from 'node:path';
import { CONTROLLER_DEFAULTS } from '@claimkit/controller';
import { describe, expect, it } from 'vitest';
import { BENCH_OPTIONS, BENCHMARKS, benchStartup, DEFAULT_BENCHMARKS } from './args.ts';

const start = (...argv: string[]) => benchStartup(argv, '/r');
const parse = (...argv: string[]) => {
  const s = start(...argv);
  if (!('config' in s)) throw new Error(`not a configuration: ${JSON.stringify(s)}`);
  return s.config;
};
const error = (...argv: string[]) => {
  const s = start(...argv);
  if (!('error' in s)) throw new Error(`not a usage error: ${JSON.stringify(s)}`);
  return s.error;
};

describe('pnpm bench arguments', () => {
  it('defaults (from the table): the quick benchmarks, one namespace, no controller args', () => {
    expect(parse()).toEqual({
      only: DEFAULT_BENCHMARKS,
      controllerOnly: false,
      trials: 25,
      binds: 500,
      rss: 10_000,
      concurrency: CONTROLLER_DEFAULTS.concurrency,
      results: '/r/bench/results.json',
      quick: false,
      namespaces: 1,
      seconds: 60,
      seed: 1,
      controllerArgs: [],
      shards: 1,
      restores: 21,
      refill: false,
    });
    expect(parse().pods).toBeUndefined();
  });

  it("runs the controller's shipped worker count unless told otherwise (DESIGN: the benches run the shipped defaults)", () => {
    expect(parse().concurrency).toBe(CONTROLLER_DEFAULTS.concurrency);
    expect(parse('agent-sandbox', '--concurrency', '16').concurrency).toBe(16);
  });

  it('the 37,000-pod run: a named benchmark runs alone, with its scale', () => {
    expect(parse('warm-pool-scale', '--pods', '37000', '--namespaces', '13')).toMatchObject({
      only: ['warm-pool-scale'],
      controllerOnly: true,
      pods: 37_000,
      namespaces: 13,
    });
  });

  it('takes benchmarks as arguments (comma-separated too) over --only, or --only alone', () => {
    expect(parse('warm-pool-scale', 'agent-sandbox,rss', '--controller-only').only).toEqual([
      'warm-pool-scale',
      'agent-sandbox',
      'rss',
    ]);
    expect(parse('--only', 'binds', 'rss').only).toEqual(['rss']);
    expect(parse('--only=takeover,binds')).toMatchObject({
      only: ['takeover', 'binds'],
      controllerOnly: false,
    });
    expect(parse('--controller-only').controllerOnly).toBe(true);
  });

  it('passes controller args through, repeatable, as --flag=value or --flag value, commas and all', () => {
    const o = parse(
      'agent-sandbox',
      '--controller-arg=--disable-claim-events',
      '--controller-arg',
      '--pool-coalesce=1s',
      '--controller-arg=--x=a,b',
      '--seconds=30',
      '--seed',
      '7',
    );
    expect(o).toMatchObject({
      only: ['agent-sandbox'],
      controllerArgs: ['--disable-claim-events', '--pool-coalesce=1s', '--x=a,b'],
      seconds: 30,
      seed: 7,
    });
    expect(parse('agent-sandbox', '--seed=-3').seed).toBe(-3);
  });

  it('takes warm-start restores, takeover trials, binds and RSS claims', () => {
    expect(parse('warm-start', '--restores', '5').restores).toBe(5);
    expect(parse('--trials=3', '--binds=40', '--rss=100')).toMatchObject({ trials: 3, binds: 40, rss: 100 });
  });

  it('resolves a results file or profile directory given from here; the default is in the repository', () => {
    expect(parse('--results', 'out.json').results).toBe(resolve('out.json'));
    expect(parse('--results=/tmp/x.json').results).toBe('/tmp/x.json');
    expect(parse('--cpu-prof', 'prof').cpuProfDir).toBe(resolve('prof'));
    expect(parse().cpuProfDir).toBeUndefined();
  });

  it('takes --quick as a bool', () => {
    expect(parse('warm-pool-scale', '--quick').quick).toBe(true);
  });

  it('takes a memory limit for the controller as a Kubernetes quantity', () => {
    expect(parse('warm-pool-scale', '--memory-limit=512Mi').memoryLimitBytes).toBe(512 * 2 ** 20);
    expect(parse('agent-sandbox', '--memory-limit', '1Gi').memoryLimitBytes).toBe(2 ** 30);
    expect(error('--memory-limit', '512MB')).toBe(
      'pnpm bench: --memory-limit: want a size such as 512Mi or 1Gi, got "512MB" (see --help)',
    );
    expect(error('--memory-limit', '0')).toMatch(/^pnpm bench: --memory-limit: want a size/);
  });

  it('runs the controller as N shards (one by default), not with a memory limit (one cgroup, one process)', () => {
    expect(parse().shards).toBe(1);
    expect(parse('warm-pool-scale', '--shards', '2').shards).toBe(2);
    expect(error('--shards', '0')).toBe('pnpm bench: --shards: want an integer >= 1, got "0" (see --help)');
    expect(error('--shards=2', '--memory-limit=512Mi')).toBe(
      'pnpm bench: --memory-limit runs one controller in one cgroup: not with --shards (see --help)',
    );
  });

  it('runs warm-start alone (it needs the real node)', () => {
    expect(parse('warm-start').only).toEqual(['warm-start']);
    expect(error('warm-start', 'takeover')).toBe(
      'pnpm bench: warm-start runs alone (it needs the real node) (see --help)',
    );
    expect(error('--only=warm-start,rss')).toMatch(/warm-start runs alone/);
  });

  it("refuses what it does not know or cannot count, in core's one wording", () => {
    const known = `want one of ${BENCHMARKS.join(', ')}`;
    expect(error('--pods', '0')).toBe('pnpm bench: --pods: want an integer >= 1, got "0" (see --help)');
    expect(error('--namespaces', 'x')).toBe(
      'pnpm bench: --namespaces: want an integer >= 1, got "x" (see --help)',
    );
    expect(error('--controller-arg')).toBe('pnpm bench: --controller-arg: needs a value (see --help)');
    expect(error('nope')).toBe(`pnpm bench: unknown benchmark "nope" (${known}) (see --help)`);
    expect(error(',')).toBe('pnpm bench: want at least one benchmark (see --help)');
    expect(error('--only', 'rss,nope')).toBe(
      `pnpm bench: --only: unknown benchmark "nope" (${known}) (see --help)`,
    );
    expect(error('--nope', '1')).toBe('pnpm bench: unknown flag --nope (see --help)');
    expect(error('--quick=maybe', '--trials=0')).toBe(
      'pnpm bench: --quick: want true or false, got "maybe"; --trials: want an integer >= 1, got "0" (see --help)',
    );
  });

  it('--help: every flag of the table with its default, under the usage', () => {
    const s = start('--trials=0', '--help');
    if (!('help' in s)) throw new Error('no help');
    expect(s.help).toMatch(/^usage: pnpm bench \[BENCHMARK\.\.\.\] \[flags\]\n/);
    for (const name of Object.keys(BENCH_OPTIONS)) expect(s.help).toContain(`--${name}`);
    expect(s.help).toMatch(/--trials N +takeover trials \(default 25\)$/m);
    expect(s.help).toMatch(
      /--results FILE +the file .* into\s+\(default bench\/results\.json in the repository\)$/m,
    );
    expect(s.help).toMatch(/--controller-arg ARG +.*\n.*\(repeatable\)$/m);
    expect(s.help).toContain(`(default ${DEFAULT_BENCHMARKS.join(',')})`);
    for (const line of s.help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
  });
});
