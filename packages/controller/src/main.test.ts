// The two binaries as a user meets them: --help on stdout with exit 0, and a bad flag as one line on
// stderr with exit 2 (never the usage, never a stack trace).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

function runBin(entry: string, args: string[]) {
  const r = spawnSync(process.execPath, ['--conditions=@claimkit/source', join(SRC, entry), ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderrLines: r.stderr.split('\n').filter((l) => l !== '') };
}

describe.each([
  ['claimkit-controller', 'main.ts', '--leader-elect'],
  ['claimkit-capture-agent', 'agent/main.ts', '--duration-ms'],
])('%s', (bin, entry, documentedFlag) => {
  it('prints --help to stdout and exits 0', () => {
    const r = runBin(entry, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(documentedFlag);
    expect(r.stderrLines).toEqual([]);
  }, 60_000);

  it('answers a bad flag with one line on stderr and exit code 2', () => {
    const r = runBin(entry, ['--no-such-flag']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderrLines).toEqual([`${bin}: unknown flag --no-such-flag (see --help)`]);
  }, 60_000);
});
