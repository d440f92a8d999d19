// The kubectl plugin's release artefacts: an archive per platform, packed reproducibly, and a krew
// manifest krew would accept (a name that is not generic, the release's version, every platform
// with the uri and sha256 of the archive packed here).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAIMKIT_VERSION, toYaml } from '@claimkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  KREW_BIN,
  KREW_PLATFORMS,
  krewArtefact,
  krewManifest,
  krewProblems,
  packKrewArchive,
  writeKrewArtefacts,
} from './krew.ts';
import { releasePlan } from './plan.ts';
import { readWorkspace } from './workspace.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCE = 'https://github.com/claimkit/claimkit';
const dir = mkdtempSync(join(tmpdir(), 'claimkit-krew-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const license = join(root, 'packages/cli/LICENSE');

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Stand-ins for the compiled binaries, one per platform, where the workflow puts them. */
function binaries(into: string) {
  for (const p of KREW_PLATFORMS) {
    mkdirSync(join(into, `${p.os}-${p.arch}`), { recursive: true });
    writeFileSync(
      join(into, `${p.os}-${p.arch}`, KREW_BIN),
      `#!/bin/sh\necho claimctl for ${p.os}/${p.arch}\n`,
    );
  }
}

describe('the krew plugin', () => {
  it('is named claimkit (kubectl claimkit), one archive per platform on the v<version> release', () => {
    const a = krewArtefact('1.4.2', SOURCE);
    expect(a).toMatchObject({
      name: 'claimkit',
      version: 'v1.4.2',
      releaseTag: 'v1.4.2',
      manifestFile: 'claimkit.yaml',
    });
    expect(a.archives.map((x) => [`${x.os}/${x.arch}`, x.uri])).toEqual([
      ['linux/amd64', `${SOURCE}/releases/download/v1.4.2/kubectl-claimkit_v1.4.2_linux_amd64.tar.gz`],
      ['linux/arm64', `${SOURCE}/releases/download/v1.4.2/kubectl-claimkit_v1.4.2_linux_arm64.tar.gz`],
      ['darwin/amd64', `${SOURCE}/releases/download/v1.4.2/kubectl-claimkit_v1.4.2_darwin_amd64.tar.gz`],
      ['darwin/arm64', `${SOURCE}/releases/download/v1.4.2/kubectl-claimkit_v1.4.2_darwin_arm64.tar.gz`],
    ]);
    // The bin the archives carry is the one packages/cli ships for kubectl.
    const cli = JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    expect(Object.keys(cli.bin)).toContain(KREW_BIN);
  });

  it('the plan of this repository carries it at the release version', () => {
    const r = releasePlan(readWorkspace(root, 'a'.repeat(40)));
    if ('errors' in r) throw new Error(r.errors.join('\n'));
    expect(r.plan.krew).toEqual(krewArtefact(CLAIMKIT_VERSION, SOURCE));
  });

  it('packs reproducibly: the binary, executable, and the licence', () => {
    const bin = join(dir, 'bin');
    writeFileSync(bin, '#!/bin/sh\n');
    chmodSync(bin, 0o600);
    const a = packKrewArchive(bin, license, join(dir, 'a.tar.gz'));
    const b = packKrewArchive(bin, license, join(dir, 'b.tar.gz'));
    expect(a.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(b.sha256).toBe(a.sha256);
    expect(a.sha256).toBe(sha256(join(dir, 'a.tar.gz')));
    const listing = execFileSync('tar', ['-tvzf', join(dir, 'a.tar.gz')], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(listing.map((l) => l.split(/\s+/).at(-1))).toEqual([KREW_BIN, 'LICENSE']);
    expect(listing.find((l) => l.endsWith(KREW_BIN))).toMatch(/^-rwxr-xr-x 0\/0 /);
  });

  it('pnpm release --krew: archives and a valid manifest whose sha256 are those of the archives', () => {
    const out = join(dir, 'krew');
    binaries(out);
    const a = krewArtefact('1.4.2', SOURCE);
    expect(writeKrewArtefacts(a, '1.4.2', license, out)).toEqual([]);
    expect(
      readdirSync(out)
        .filter((f) => !f.includes('-'))
        .sort(),
    ).toEqual(['claimkit.yaml']);
    const want = krewManifest(
      a,
      Object.fromEntries(a.archives.map((x) => [x.file, sha256(join(out, x.file))])),
    );
    expect(krewProblems(want, '1.4.2')).toEqual([]);
    const yaml = readFileSync(join(out, 'claimkit.yaml'), 'utf8');
    expect(yaml).toContain(toYaml(want));
    expect(want.spec.platforms.map((p) => p.sha256)).toEqual(
      a.archives.map((x) => sha256(join(out, x.file))),
    );
    expect(want.spec.platforms.every((p) => p.bin === KREW_BIN)).toBe(true);
    expect(yaml).toMatch(
      /^apiVersion: krew\.googlecontainertools\.github\.com\/v1alpha2\nkind: Plugin\nmetadata:\n {2}name: claimkit\n/m,
    );
  });

  it('refuses a missing binary, writing no manifest', () => {
    const out = join(dir, 'partial');
    binaries(out);
    rmSync(join(out, 'darwin-arm64'), { recursive: true });
    const problems = writeKrewArtefacts(krewArtefact('1.4.2', SOURCE), '1.4.2', license, out);
    expect(problems).toEqual([
      expect.stringMatching(/darwin-arm64\/kubectl-claimkit: missing .*--target aarch64-apple-darwin/),
    ]);
    expect(readdirSync(out)).not.toContain('claimkit.yaml');
  });

  it('krewProblems: a generic name, another version, an unfilled sha256, a missing platform', () => {
    const a = krewArtefact('1.4.2', SOURCE);
    const m = krewManifest(a, { [a.archives[0]!.file]: 'ab'.repeat(32) });
    m.metadata.name = 'claim';
    m.spec.platforms.pop();
    expect(krewProblems(m, '1.5.0')).toEqual([
      'name "claim" is generic: krew refuses it',
      "version v1.4.2, want v1.5.0 (the release's)",
      "linux/amd64: uri is not the v1.5.0 release's",
      "linux/arm64: uri is not the v1.5.0 release's",
      'linux/arm64: sha256 "" is not a hex sha256',
      "darwin/amd64: uri is not the v1.5.0 release's",
      'darwin/amd64: sha256 "" is not a hex sha256',
      'darwin/arm64: no platform',
    ]);
  });
});
