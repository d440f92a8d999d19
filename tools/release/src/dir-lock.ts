// One maker of a cached thing at a time across processes (parallel test files, a global setup and a
// test): the first takes the lock directory, the others wait until the thing is ready or the lock
// is free. `ready()` says the thing exists; the maker runs only when it does not.

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';

export function underDirLock<T>(
  lock: string,
  ready: () => T | undefined,
  make: () => T,
  timeoutMs = 900_000,
): T {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const done = ready();
    if (done !== undefined) return done;
    try {
      mkdirSync(lock);
      break;
    } catch {
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
