import { CONTROLLER_DEFAULTS } from '@claimkit/controller';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BENCHMARKS, parseArgs, UsageError } from './args.ts';

const parse = (...argv: string[]) => parseArgs(argv, '/r/bench/results.json');

describe('pnpm bench arguments', () => {
  it('defaults: the four quick benchmarks, one namespace, no controller args', () => {
    expect(parse()).toMatchObject({
      only: DEFAULT_BENCHMARKS,
      controllerOnly: false,
      namespaces: 1,
      seconds: 60,
      seed: 1,
      controllerArgs: [],
      results: '/r/bench/results.json',
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

  it('passes controller args through, repeatable, as --flag=value or --flag value', () => {
    const o = parse(
      'agent-sandbox',
      '--controller-arg=--disable-claim-events',
      '--controller-arg',
      '--pool-coalesce=1s',
      '--seconds=30',
      '--seed',
      '7',
    );
    expect(o).toMatchObject({
      only: ['agent-sandbox'],
      controllerArgs: ['--disable-claim-events', '--pool-coalesce=1s'],
      seconds: 30,
      seed: 7,
    });
  });

  it('takes a memory limit for the controller as a Kubernetes quantity', () => {
    expect(parse('warm-pool-scale', '--memory-limit=512Mi').memoryLimitBytes).toBe(512 * 2 ** 20);
    expect(parse('agent-sandbox', '--memory-limit', '1Gi').memoryLimitBytes).toBe(2 ** 30);
    expect(() => parse('--memory-limit', '512MB')).toThrow(/512Mi or 1Gi \(got 512MB\)/);
    expect(() => parse('--memory-limit', '0')).toThrow(UsageError);
  });

  it('runs the controller as N shards (one by default), not with a memory limit (one cgroup, one process)', () => {
    expect(parse().shards).toBe(1);
    expect(parse('warm-pool-scale', '--shards', '2').shards).toBe(2);
    expect(() => parse('--shards', '0')).toThrow(UsageError);
    expect(() => parse('--shards=2', '--memory-limit=512Mi')).toThrow(/not with --shards/);
  });

  it('refuses what it does not know or cannot count', () => {
    expect(() => parse('--pods', '0')).toThrow(UsageError);
    expect(() => parse('--namespaces', 'x')).toThrow(UsageError);
    expect(() => parse('--controller-arg')).toThrow(/needs a value/);
    expect(() => parse('nope')).toThrow(UsageError);
    expect(() => parse('--nope', '1')).toThrow(/unknown flag/);
  });
});
