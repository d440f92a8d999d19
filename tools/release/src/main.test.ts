// `pnpm release` publishes only in the release workflow: anywhere else it refuses with a clear message
// and exit 2, before reading or packing anything.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { refusePublishing } from './main.ts';

describe('pnpm release without --dry-run', () => {
  it('is refused unless CI=true and GITHUB_ACTIONS=true', () => {
    expect(refusePublishing({})).toMatch(/runs only in the release workflow.*pnpm release --dry-run/);
    expect(refusePublishing({ CI: 'true' })).toBeDefined();
    expect(refusePublishing({ GITHUB_ACTIONS: 'true' })).toBeDefined();
    expect(refusePublishing({ CI: 'true', GITHUB_ACTIONS: 'true' })).toBeUndefined();
  });

  it('exits 2 with one line saying why, publishing nothing', () => {
    const main = fileURLToPath(new URL('./main.ts', import.meta.url));
    const env = { ...process.env };
    delete env.CI;
    delete env.GITHUB_ACTIONS;
    const r = spawnSync(process.execPath, ['--conditions=@claimkit/source', main], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^pnpm release: refused: .*--dry-run$/),
    ]);
    const bad = spawnSync(process.execPath, ['--conditions=@claimkit/source', main, '--publish-now'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('pnpm release: unknown argument "--publish-now" (see --help)\n');
  });
});
