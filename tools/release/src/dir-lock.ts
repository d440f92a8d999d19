// One maker at a time across processes (parallel test files and projects, a global setup and a
// test): the first takes the lock directory (its pid inside), the others wait until the thing is
// ready or the lock is free. A lock whose holder died (a killed CI run) is taken over, not waited on.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function holder(lock: string): 'alive' | 'dead' | 'unknown' {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    return 'unknown'; // being taken right now (the pid is written just after the mkdir)
  }
  if (!Number.isInteger(pid) || pid <= 0) return 'dead';
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'dead';
  }
}

/**
 * `make()` under the lock unless `ready()` already answers (checked before and after taking it).
 * Throws after `timeoutMs` of waiting on a live holder, naming the lock.
 */
export function underDirLock<T>(
  lock: string,
  ready: () => T | undefined,
  make: () => T,
  timeoutMs = 900_000,
): T {
  const deadline = Date.now() + timeoutMs;
  let pidless = 0;
  for (;;) {
    const done = ready();
    if (done !== undefined) return done;
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      // A holder that died, or a pid never written after 10 s: a dead lock, taken over.
      const h = holder(lock);
      pidless = h === 'unknown' ? pidless + 1 : 0;
      if (h === 'dead' || pidless > 10) {
        rmSync(lock, { recursive: true, force: true });
        pidless = 0;
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lock} held for ${timeoutMs / 60_000} min`);
      execFileSync('sleep', ['1']);
    }
  }
  try {
    return ready() ?? make();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `fn()` while no other process runs under the same lock. */
export function exclusively<T>(lock: string, fn: () => T, timeoutMs = 900_000): T {
  return underDirLock(lock, () => undefined, fn, timeoutMs);
}
