// The two binaries as a user meets them: --help on stdout with exit 0, and a bad flag as one line on
// stderr with exit 2 (never the usage, never a stack trace).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

describe('claimkit-controller against an API server that does not answer', () => {
  it("logs its start (client-node's API index not loaded), then exits 1 with one line saying what it could not reach", () => {
    const dir = mkdtempSync(join(tmpdir(), 'ck-main-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    const r = runBin('main.ts', ['--kubeconfig', kubeconfig, '--metrics-addr', '0', '--health-addr', '0']);
    expect(r.code).toBe(1);
    // Logs are JSON lines on stderr (as klog writes them); the fatal error is the one plain line.
    const json = r.stderrLines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(json.find((l) => l.msg === 'starting')).toMatchObject({
      server: 'https://127.0.0.1:1',
      clientNodeApiIndex: 'not loaded',
      clientNodeDeferred: ['hpagent', 'socks', 'socks-proxy-agent', 'undici'],
    });
    expect(r.stderrLines.filter((l) => !l.startsWith('{'))).toEqual([
      expect.stringMatching(
        /^claimkit-controller: .*cannot reach the API server at https:\/\/127\.0\.0\.1:1/,
      ),
    ]);
  }, 60_000);
});
