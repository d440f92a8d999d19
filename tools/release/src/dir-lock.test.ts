// The cross-process lock of the cached makers: one maker, a ready thing is not made again, and a
// lock left by a dead holder is taken over instead of waited on.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exclusively, underDirLock } from './dir-lock.ts';

const dir = mkdtempSync(join(tmpdir(), 'claimkit-dir-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('underDirLock', () => {
  it('makes once, then answers from ready() without making', () => {
    const lock = join(dir, 'a.lock');
    let made = 0;
    let thing: string | undefined;
    const get = () =>
      underDirLock(
        lock,
        () => thing,
        () => {
          made++;
          thing = 'made';
          return thing;
        },
      );
    expect(get()).toBe('made');
    expect(get()).toBe('made');
    expect(made).toBe(1);
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a lock whose holder is dead (a killed run), without waiting for the timeout', () => {
    const lock = join(dir, 'b.lock');
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), dead.stdout.trim());
    const t0 = Date.now();
    expect(exclusively(lock, () => 'ran', 5_000)).toBe('ran');
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it('waits on a live holder and says which lock when it gives up', () => {
    const lock = join(dir, 'c.lock');
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    expect(() => exclusively(lock, () => 'ran', 1_500)).toThrow(`${lock} held for`);
    rmSync(lock, { recursive: true, force: true });
  });
});
