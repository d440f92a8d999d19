// One real node per machine: the lock names the run that has it. A run killed with everything it
// started leaves its state directory and pid file behind; its lock must not make every later run's
// real-node suites skip (seen after a CI run was killed mid-run: seven suites skipped).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireNodeLock } from './local-node-cleanup.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'ck-lock-'));
  dirs.push(d);
  return d;
};
/** A run's state directory whose pid file names `owner` and one process. */
function run(owner: number, proc: number): string {
  const d = tmp();
  writeFileSync(join(d, 'pids.json'), JSON.stringify({ owner, procs: [{ name: 'etcd', pid: proc }] }));
  return d;
}
/** A pid no process has (a process started and reaped would do; this one is above pid_max). */
const DEAD = 2 ** 22 + 1;

describe('the real node lock', () => {
  it('a live run keeps it; the same run takes it again', () => {
    const lock = join(tmp(), 'node.lock');
    const live = run(process.pid, DEAD);
    expect(acquireNodeLock(live, lock)).toBeUndefined();
    expect(acquireNodeLock(live, lock)).toBeUndefined();
    expect(acquireNodeLock(run(DEAD, DEAD), lock)).toMatch(/another run has this machine's real node/);
  });

  it('a run whose owner and processes are all dead no longer holds it, though its pid file is left', () => {
    const lock = join(tmp(), 'node.lock');
    const killed = run(DEAD, DEAD);
    expect(acquireNodeLock(killed, lock)).toBeUndefined();
    const next = run(process.pid, DEAD);
    expect(acquireNodeLock(next, lock)).toBeUndefined();
    expect(readFileSync(lock, 'utf8')).toBe(next);
  });

  it('a run with its owner gone but a process still running keeps it', () => {
    const lock = join(tmp(), 'node.lock');
    expect(acquireNodeLock(run(DEAD, process.pid), lock)).toBeUndefined();
    expect(acquireNodeLock(run(process.pid, DEAD), lock)).toMatch(/another run/);
  });
});
