import { describe, expect, it } from 'vitest';
import { type CpuProfile, categoryOf, summariseProfile } from './profile-summary.ts';

const frame = (id: number, functionName: string, url = '', lineNumber = -1) => ({
  id,
  callFrame: { functionName, url, lineNumber, columnNumber: 0 },
});

// 20 samples 1 ms apart: 10 idle, 10 busy (GC 4, undici 2, one function of kube's dist under two
// call paths 1 + 1, node:internal 1, (program) 1).
const PROFILE: CpuProfile = {
  nodes: [
    frame(1, '(root)'),
    frame(2, '(idle)'),
    frame(3, '(garbage collector)'),
    frame(4, 'onData', 'file:///w/node_modules/.pnpm/undici@7.1.0/node_modules/undici/lib/client.js', 41),
    frame(5, 'decode', 'file:///w/packages/kube/dist/watch.js', 9),
    frame(6, 'decode', 'file:///w/packages/kube/dist/watch.js', 9),
    frame(7, 'Readable.push', 'node:internal/streams/readable', 99),
    frame(8, '(program)'),
    frame(9, '', 'file:///w/node_modules/@kubernetes/client-node/dist/api.js', 0),
  ],
  startTime: 0,
  endTime: 20_000,
  samples: [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 5, 6, 7, 8],
  timeDeltas: Array.from({ length: 20 }, () => 1000),
};

describe('summariseProfile', () => {
  it('ranks self time over busy samples only, one function summed over its call paths', () => {
    const s = summariseProfile(PROFILE, 3);
    expect(s).toMatchObject({ busySamples: 10, busyPercent: 50, busyMs: 10 });
    expect(s.top).toEqual([
      { function: '(garbage collector)', file: '', selfPercent: 40 },
      { function: 'onData', file: 'undici/lib/client.js:42', selfPercent: 20 },
      { function: 'decode', file: 'packages/kube/dist/watch.js:10', selfPercent: 20 },
    ]);
  });

  it('groups by category: GC, each package, node internals, each workspace package', () => {
    expect(summariseProfile(PROFILE).categories).toEqual([
      { category: 'garbage collector', selfPercent: 40 },
      { category: 'undici', selfPercent: 20 },
      { category: 'packages/kube/dist', selfPercent: 20 },
      { category: 'node: internals', selfPercent: 10 },
      { category: '(program)', selfPercent: 10 },
    ]);
  });

  it('falls back to hitCount without a sample list, and names anonymous functions', () => {
    const s = summariseProfile({
      nodes: [
        { ...frame(1, '(idle)'), hitCount: 3 },
        { ...frame(2, '', 'file:///w/node_modules/@kubernetes/client-node/dist/api.js', 0), hitCount: 1 },
      ],
      startTime: 0,
      endTime: 4000,
    });
    expect(s).toMatchObject({ busySamples: 1, busyPercent: 25, busyMs: 1 });
    expect(s.top).toEqual([
      { function: '(anonymous)', file: '@kubernetes/client-node/dist/api.js:1', selfPercent: 100 },
    ]);
    expect(s.categories).toEqual([{ category: '@kubernetes/client-node', selfPercent: 100 }]);
  });

  it('has no percentages for a profile with no busy samples', () => {
    expect(summariseProfile({ nodes: [{ ...frame(1, '(idle)'), hitCount: 5 }] })).toMatchObject({
      busySamples: 0,
      top: [],
      categories: [],
    });
  });
});

describe('categoryOf', () => {
  it('names builtins, workspace sources and anything else', () => {
    expect(categoryOf('', 'JSONParse')).toBe('V8 builtins and native');
    expect(categoryOf('node:http2', 'x')).toBe('node: internals');
    expect(categoryOf('file:///r/packages/core/src/loop/x.ts', 'f')).toBe('packages/core/src');
    expect(categoryOf('file:///r/apps/dev/src/bench/main.ts', 'f')).toBe('apps/dev/src');
    expect(categoryOf('file:///tmp/x.js', 'f')).toBe('other');
  });
});
