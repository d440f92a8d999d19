// The kubectl plugin as a release artefact: claimctl compiled per platform as `kubectl-claimkit`
// (packages/cli/scripts/compile.sh, `deno compile --target`), one .tar.gz per platform attached to
// the GitHub release v<version>, and the krew manifest (claimkit.yaml) whose sha256 are those of the
// archives packed here. krew refuses generic plugin names (`claim`), hence `claimkit`.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { toYaml } from '@claimkit/core';
import { digestsOf } from './artefacts.ts';

/** The krew plugin name: `kubectl claimkit`. */
export const KREW_PLUGIN = 'claimkit';
/** The executable in each archive (packages/cli's bin of the same name). */
export const KREW_BIN = `kubectl-${KREW_PLUGIN}`;
export const KREW_MANIFEST_FILE = `${KREW_PLUGIN}.yaml`;

/** What krew installs on: each with the `deno compile --target` that builds for it. */
export const KREW_PLATFORMS = [
  { os: 'linux', arch: 'amd64', target: 'x86_64-unknown-linux-gnu' },
  { os: 'linux', arch: 'arm64', target: 'aarch64-unknown-linux-gnu' },
  { os: 'darwin', arch: 'amd64', target: 'x86_64-apple-darwin' },
  { os: 'darwin', arch: 'arm64', target: 'aarch64-apple-darwin' },
] as const;

export interface KrewArchive {
  os: string;
  arch: string;
  target: string;
  /** The archive's file name, and where the release serves it. */
  file: string;
  uri: string;
}

export interface KrewArtefact {
  name: string;
  /** krew's version: v<release version>. */
  version: string;
  /** The GitHub release the archives and the manifest are attached to. */
  releaseTag: string;
  homepage: string;
  manifestFile: string;
  archives: KrewArchive[];
}

export function krewArtefact(version: string, source: string): KrewArtefact {
  const tag = `v${version}`;
  return {
    name: KREW_PLUGIN,
    version: tag,
    releaseTag: tag,
    homepage: `${source}/tree/main/packages/cli#readme`,
    manifestFile: KREW_MANIFEST_FILE,
    archives: KREW_PLATFORMS.map((p) => {
      const file = `${KREW_BIN}_${tag}_${p.os}_${p.arch}.tar.gz`;
      return { ...p, file, uri: `${source}/releases/download/${tag}/${file}` };
    }),
  };
}

export const KREW_SHORT_DESCRIPTION = 'Inspect, repair and drive claimkit warm-pool claims';

export interface KrewManifest {
  apiVersion: 'krew.googlecontainertools.github.com/v1alpha2';
  kind: 'Plugin';
  metadata: { name: string };
  spec: {
    version: string;
    homepage: string;
    shortDescription: string;
    description: string;
    platforms: {
      selector: { matchLabels: { os: string; arch: string } };
      uri: string;
      sha256: string;
      files: { from: string; to: string }[];
      bin: string;
    }[];
  };
}

/** The krew manifest for the archives, each with the sha256 (hex) of the file the release attaches. */
export function krewManifest(a: KrewArtefact, sha256: Record<string, string>): KrewManifest {
  return {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: a.name },
    spec: {
      version: a.version,
      homepage: a.homepage,
      shortDescription: KREW_SHORT_DESCRIPTION,
      description: [
        'claimctl as a kubectl plugin: list and describe claimkit Captures, PodPools, PodClaims and',
        'PodClaimSets; find and repair stuck finalizers, residue labels, lost pods and dead capture',
        'holders (doctor --fix); act as a Capture holder; ask for a claim migration.',
      ].join('\n'),
      platforms: a.archives.map((x) => ({
        selector: { matchLabels: { os: x.os, arch: x.arch } },
        uri: x.uri,
        sha256: sha256[x.file] ?? '',
        files: [
          { from: KREW_BIN, to: '.' },
          { from: 'LICENSE', to: '.' },
        ],
        bin: KREW_BIN,
      })),
    },
  };
}

// krew-index's naming guide: no generic words, no kubectl/kube prefix, lowercase with dashes.
const GENERIC_NAMES = new Set([
  'claim',
  'claims',
  'pod',
  'pods',
  'pool',
  'get',
  'describe',
  'doctor',
  'plugin',
  'tool',
]);

/** Why krew (or krew-index review) would refuse the manifest for this release version; [] when none. */
export function krewProblems(m: KrewManifest, releaseVersion: string): string[] {
  const problems: string[] = [];
  const name = m.metadata.name;
  if (m.apiVersion !== 'krew.googlecontainertools.github.com/v1alpha2' || m.kind !== 'Plugin')
    problems.push(`not a krew Plugin: ${m.apiVersion} ${m.kind}`);
  if (!/^[a-z][a-z0-9-]*[a-z0-9]$/.test(name))
    problems.push(`name ${JSON.stringify(name)}: lowercase words and dashes`);
  if (GENERIC_NAMES.has(name)) problems.push(`name ${JSON.stringify(name)} is generic: krew refuses it`);
  if (/^kube/.test(name)) problems.push(`name ${JSON.stringify(name)}: no kube/kubectl prefix`);
  if (m.spec.version !== `v${releaseVersion}`)
    problems.push(`version ${m.spec.version}, want v${releaseVersion} (the release's)`);
  if (!/^https:\/\//.test(m.spec.homepage)) problems.push(`homepage ${m.spec.homepage} is not https`);
  if (!m.spec.shortDescription || m.spec.shortDescription.length > 60)
    problems.push('shortDescription: required, at most 60 characters');
  const seen = new Set<string>();
  for (const p of m.spec.platforms) {
    const where = `${p.selector.matchLabels.os}/${p.selector.matchLabels.arch}`;
    if (seen.has(where)) problems.push(`${where}: listed twice`);
    seen.add(where);
    if (!/^https:\/\/.+\.tar\.gz$/.test(p.uri))
      problems.push(`${where}: uri ${JSON.stringify(p.uri)} is not an https .tar.gz`);
    if (!p.uri.includes(`/v${releaseVersion}/`))
      problems.push(`${where}: uri is not the v${releaseVersion} release's`);
    if (!/^[0-9a-f]{64}$/.test(p.sha256))
      problems.push(`${where}: sha256 ${JSON.stringify(p.sha256)} is not a hex sha256`);
    if (p.bin !== KREW_BIN || !p.files.some((f) => f.from === p.bin))
      problems.push(`${where}: bin ${p.bin} is not in the archive's files`);
  }
  for (const want of KREW_PLATFORMS) {
    if (!seen.has(`${want.os}/${want.arch}`)) problems.push(`${want.os}/${want.arch}: no platform`);
  }
  return problems;
}

/**
 * A reproducible archive of the plugin binary and the licence (fixed owner, mode and mtime, sorted,
 * gzip without a timestamp): the same binary gives the same sha256 on any machine.
 */
export function packKrewArchive(
  binary: string,
  license: string,
  dest: string,
): { sha256: string; size: number } {
  const stage = mkdtempSync(join(tmpdir(), 'claimkit-krew-'));
  try {
    copyFileSync(binary, join(stage, KREW_BIN));
    chmodSync(join(stage, KREW_BIN), 0o755);
    copyFileSync(license, join(stage, 'LICENSE'));
    chmodSync(join(stage, 'LICENSE'), 0o644);
    const tar = execFileSync(
      'tar',
      [
        '--sort=name',
        '--owner=0',
        '--group=0',
        '--numeric-owner',
        '--mtime=@0',
        '--format=ustar',
        '-cf',
        '-',
        '-C',
        stage,
        KREW_BIN,
        'LICENSE',
      ],
      { maxBuffer: 1 << 30 },
    );
    const gz = gzipSync(tar, { level: 9 });
    writeFileSync(dest, gz);
    const d = digestsOf(gz);
    return { sha256: d.sha256.slice('sha256:'.length), size: d.size };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * `pnpm release --krew DIR`: from DIR/<os>-<arch>/kubectl-claimkit (the binaries the release workflow
 * compiled), writes DIR/<archive> for each platform and DIR/claimkit.yaml; returns the problems
 * (a missing binary, an invalid manifest), [] when the artefacts are ready to attach.
 */
export function writeKrewArtefacts(
  a: KrewArtefact,
  releaseVersion: string,
  license: string,
  dir: string,
): string[] {
  const sha256: Record<string, string> = {};
  const problems: string[] = [];
  mkdirSync(dir, { recursive: true });
  for (const x of a.archives) {
    const binary = join(dir, `${x.os}-${x.arch}`, KREW_BIN);
    if (!existsSync(binary)) {
      problems.push(
        `${binary}: missing (compile it with ENTRY=dist/${KREW_BIN}.js packages/cli/scripts/compile.sh OUT --target ${x.target})`,
      );
      continue;
    }
    sha256[x.file] = packKrewArchive(binary, license, join(dir, x.file)).sha256;
  }
  if (problems.length > 0) return problems;
  const manifest = krewManifest(a, sha256);
  const invalid = krewProblems(manifest, releaseVersion);
  if (invalid.length > 0) return invalid;
  writeFileSync(
    join(dir, a.manifestFile),
    `# krew manifest of claimkit ${a.version}, written by \`pnpm release --krew\` with the sha256 of the\n# archives attached to the GitHub release ${a.releaseTag}.\n${toYaml(manifest)}`,
  );
  return [];
}
