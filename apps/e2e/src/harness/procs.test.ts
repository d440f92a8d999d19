// hasExited: a stopped component counts as gone only once its files are closed (gone or a zombie),
// not as soon as its memory is released (its cmdline reads empty before its sockets are closed).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { hasExited, isOurs } from './procs.ts';
import { waitFor } from './wait.ts';

describe('hasExited', () => {
  it('is false while the process runs, true once it has exited', async () => {
    const child = spawn('/bin/sleep', ['30'], { stdio: 'ignore' });
    const rec = { name: 'sleep', pid: child.pid!, exe: '/bin/sleep' };
    expect(isOurs(rec)).toBe(true);
    expect(hasExited(rec)).toBe(false);
    child.kill('SIGKILL');
    await waitFor('the killed sleep to have exited', () => hasExited(rec), { timeoutMs: 5_000 });
    expect(isOurs(rec)).toBe(false);
  });

  it('is true for a pid that runs something else or does not exist', () => {
    expect(hasExited({ name: 'x', pid: process.pid, exe: '/not/this/process' })).toBe(true);
    expect(hasExited({ name: 'x', pid: 2 ** 22 + 1, exe: '/bin/sleep' })).toBe(true);
  });
});
