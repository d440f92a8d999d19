// The memory cgroup the benches run the controller in, against a directory laid out as cgroupfs is.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryCgroup, inCgroupArgv, parseMemorySize } from './memory-cgroup.ts';

describe('parseMemorySize', () => {
  it('reads Kubernetes quantities and bytes', () => {
    expect(parseMemorySize('512Mi')).toBe(536_870_912);
    expect(parseMemorySize('1Gi')).toBe(2 ** 30);
    expect(parseMemorySize('300M')).toBe(3e8);
    expect(parseMemorySize('4096')).toBe(4096);
    for (const bad of ['', '0', '-1Mi', '1.5Gi', '512MB', 'Mi'])
      expect(parseMemorySize(bad), bad).toBeUndefined();
  });
});

describe('createMemoryCgroup', () => {
  it('cgroup v2: memory.max, OOM kills from memory.events, peak from memory.peak', () => {
    const root = mkdtempSync(join(tmpdir(), 'ck-cg-'));
    writeFileSync(join(root, 'cgroup.controllers'), 'cpu io memory pids\n');
    const cg = createMemoryCgroup(2 ** 29, 'bench', root);
    expect(readFileSync(join(root, 'bench', 'memory.max'), 'utf8')).toBe('536870912');
    expect(cg.procsFile).toBe(join(root, 'bench', 'cgroup.procs'));
    expect(cg.oomKills()).toBeUndefined();
    writeFileSync(join(root, 'bench', 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    writeFileSync(join(root, 'bench', 'memory.peak'), '400000000\n');
    expect(cg.oomKills()).toBe(1);
    expect(cg.peakBytes()).toBe(4e8);
  });

  it('cgroup v1: memory/<name>/memory.limit_in_bytes, OOM kills from memory.oom_control', () => {
    const root = mkdtempSync(join(tmpdir(), 'ck-cg1-'));
    mkdirSync(join(root, 'memory'));
    const cg = createMemoryCgroup(2 ** 29, 'bench', root);
    expect(readFileSync(join(root, 'memory', 'bench', 'memory.limit_in_bytes'), 'utf8')).toBe('536870912');
    writeFileSync(
      join(root, 'memory', 'bench', 'memory.oom_control'),
      'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n',
    );
    expect(cg.oomKills()).toBe(2);
  });

  it('says why when it cannot make one', () => {
    const root = mkdtempSync(join(tmpdir(), 'ck-cg0-'));
    expect(() => createMemoryCgroup(2 ** 29, 'bench', root)).toThrow(/no memory cgroup/);
    writeFileSync(join(root, 'cgroup.controllers'), 'cpu pids\n');
    expect(() => createMemoryCgroup(2 ** 29, 'bench', root)).toThrow(/offers no memory controller/);
  });
});

describe('inCgroupArgv', () => {
  it('moves the shell into the cgroup, then execs the program with its arguments as given', () => {
    const [exe, args] = inCgroupArgv('/cg/cgroup.procs', '/usr/bin/node', ['--flag', 'a b', "it's"]);
    expect(exe).toBe('/bin/sh');
    expect(args).toEqual([
      '-c',
      'echo $$ > "$0" && exec "$@"',
      '/cg/cgroup.procs',
      '/usr/bin/node',
      '--flag',
      'a b',
      "it's",
    ]);
  });
});
