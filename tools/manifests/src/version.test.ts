// One version source: the fixed changesets group's version reaches every generated place that names a
// version (core's and the CLI's version modules, the image tags of deploy/ and `claimctl manifests`,
// the chart's version and appVersion), and a real `changeset version` in a copy of the workspace
// leaves them all lagging until `pnpm manifests` runs, then none.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAIMKIT_VERSION } from '@claimkit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { GENERATED_DIRS, generatedFiles } from './files.ts';
import type { GeneratedFile } from './generated-file.ts';
import { syncFiles } from './sync.ts';
import {
  fixedGroup,
  fixedGroupVersion,
  readWorkspacePackages,
  readWorkspaceVersion,
  type WorkspacePackage,
} from './version.ts';
import { VERSION_MODULE_PATHS } from './version-modules.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const pkg = (name: string, version: string, o: Partial<WorkspacePackage> = {}): WorkspacePackage => ({
  name,
  version,
  dir: `packages/${name.replace('@claimkit/', '')}`,
  private: false,
  ...o,
});

/** Every version the generated files name, with where: image tags, the chart, the version modules. */
function namedVersions(files: readonly GeneratedFile[]): { where: string; version: string }[] {
  const out: { where: string; version: string }[] = [];
  for (const f of files) {
    // In YAML and in the CLI module's escaped YAML alike: `image: <repository>:<tag>` ends a line.
    for (const m of f.text.matchAll(/image: ([^\s"'\\]+):([^\s"'\\:]+)(?=\\n|\n)/g)) {
      out.push({ where: `${f.path}: image ${m[1]}`, version: m[2]! });
    }
    if (f.path.endsWith('/Chart.yaml')) {
      const chart = parse(f.text) as { version: string; appVersion: string };
      out.push({ where: `${f.path}: version`, version: chart.version });
      out.push({ where: `${f.path}: appVersion`, version: chart.appVersion });
    }
    if ((VERSION_MODULE_PATHS as readonly string[]).includes(f.path)) {
      const m = /export const CLAIMKIT_VERSION = '([^']+)';/.exec(f.text);
      out.push({ where: f.path, version: m?.[1] ?? '(none)' });
    }
  }
  return out;
}

describe('the fixed group version', () => {
  const group = ['@claimkit/core', '@claimkit/cli'];

  it('is the one version of the group', () => {
    expect(fixedGroupVersion(group, [pkg('@claimkit/core', '1.2.0'), pkg('@claimkit/cli', '1.2.0')])).toEqual(
      {
        version: '1.2.0',
      },
    );
  });

  it('reports members with different versions, missing members and published packages outside the group', () => {
    const r = fixedGroupVersion(
      [...group, '@claimkit/gone'],
      [
        pkg('@claimkit/core', '1.2.0'),
        pkg('@claimkit/cli', '1.1.0'),
        pkg('@claimkit/stray', '1.2.0'),
        pkg('@claimkit/dev', '0.0.1', { private: true }),
      ],
    );
    expect(r).toEqual({
      errors: [
        'fixed group: @claimkit/gone is not a workspace package',
        'packages/stray/package.json: @claimkit/stray is published but not in the fixed group',
        'fixed group: the packages have different versions (@claimkit/core@1.2.0, @claimkit/cli@1.1.0); run `pnpm changeset version`',
      ],
    });
  });

  it("is found as the group that holds core in .changeset/config.json's fixed", () => {
    expect(fixedGroup({ fixed: [['a'], ['@claimkit/core', 'b']] })).toEqual({
      group: ['@claimkit/core', 'b'],
    });
    expect(fixedGroup({ fixed: [['a']] })).toEqual({
      errors: ['.changeset/config.json: 0 fixed groups hold @claimkit/core, want 1'],
    });
    expect(fixedGroup({})).toEqual({ errors: ['.changeset/config.json: `fixed` is not a list of groups'] });
  });

  it('in this repository: every published package is in the group, all share one version, and the code names it', () => {
    const packages = readWorkspacePackages(root).filter((p) => !p.private);
    expect(packages.map((p) => p.name).sort()).toEqual([
      '@claimkit/cli',
      '@claimkit/controller',
      '@claimkit/core',
      '@claimkit/kube',
      '@claimkit/webhook',
    ]);
    const version = readWorkspaceVersion(root);
    expect(new Set(packages.map((p) => p.version))).toEqual(new Set([version]));
    expect(CLAIMKIT_VERSION).toBe(version);
  });
});

describe('generated files name the version they are given, and no other', () => {
  const current = readWorkspaceVersion(root);
  const next = '7.8.9-rc.1';
  const files = generatedFiles({ version: next });
  const named = namedVersions(files);

  it('in the version modules, every image of deploy/ and of the CLI module, and Chart.yaml', () => {
    const where = named.map((n) => n.where);
    for (const p of VERSION_MODULE_PATHS) expect(where).toContain(p);
    expect(where).toContain('deploy/helm/claimkit/Chart.yaml: version');
    expect(where).toContain('deploy/helm/claimkit/Chart.yaml: appVersion');
    for (const f of ['deploy/controller/deployment.yaml', 'deploy/webhook/deployment.yaml']) {
      expect(where.some((w) => w.startsWith(`${f}: image`))).toBe(true);
    }
    expect(where.filter((w) => w.startsWith('packages/cli/src/manifests.generated.ts: image'))).toHaveLength(
      2,
    );
    expect(named.filter((n) => n.version !== next)).toEqual([]);
  });

  it('and no generated file still names the current version anywhere', () => {
    const escaped = current.replaceAll('.', '\\.');
    const lagging = files.filter((f) => new RegExp(`(^|[^\\w.])${escaped}($|[^\\w.])`).test(f.text));
    expect(lagging.map((f) => f.path)).toEqual([]);
  });
});

describe('changeset version, then pnpm manifests (in a copy of the workspace)', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('bumps the whole group; every versioned file lags until the generator runs, then carries the new version', () => {
    dir = mkdtempSync(join(tmpdir(), 'claimkit-version-'));
    // What changesets reads: the workspace's package.json files and .changeset/; and, through
    // node_modules, its changelog module.
    cpSync(join(root, 'package.json'), join(dir, 'package.json'));
    cpSync(join(root, 'pnpm-workspace.yaml'), join(dir, 'pnpm-workspace.yaml'));
    cpSync(join(root, '.changeset'), join(dir, '.changeset'), { recursive: true });
    for (const parent of ['packages', 'apps', 'tools']) {
      for (const d of readdirSync(join(root, parent))) {
        mkdirSync(join(dir, parent, d), { recursive: true });
        cpSync(join(root, parent, d, 'package.json'), join(dir, parent, d, 'package.json'));
      }
    }
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const before = readWorkspaceVersion(dir);
    syncFiles(generatedFiles({ version: before }), {
      root: dir,
      check: false,
      generatedDirs: GENERATED_DIRS,
    });

    // A changeset of its own (the repository may have none pending, right after a release): a minor
    // bump of one member, which the fixed group carries to all.
    writeFileSync(
      join(dir, '.changeset/test-bump.md'),
      '---\n"@claimkit/kube": minor\n---\n\nA test bump.\n',
    );
    const changesetBin = join(root, 'node_modules/@changesets/cli/bin.js');
    execFileSync(process.execPath, [changesetBin, 'version'], { cwd: dir, stdio: 'pipe', timeout: 60_000 });

    const after = readWorkspaceVersion(dir);
    const [major, minor] = before.split('.').map(Number) as [number, number];
    // At least the test's minor bump (pending changesets may add a major one).
    expect(after === `${major}.${minor + 1}.0` || Number(after.split('.')[0]) > major, after).toBe(true);
    const bumped = generatedFiles({ version: after });
    const lagging = syncFiles(bumped, { root: dir, check: true, generatedDirs: GENERATED_DIRS }).outOfDate;
    const versioned = [...new Set(namedVersions(bumped).map((n) => n.where.split(':')[0]!))].sort();
    expect(lagging.sort()).toEqual(versioned);

    syncFiles(bumped, { root: dir, check: false, generatedDirs: GENERATED_DIRS });
    expect(syncFiles(bumped, { root: dir, check: true, generatedDirs: GENERATED_DIRS }).outOfDate).toEqual(
      [],
    );
    const onDisk = versioned.map((path) => ({ path, text: readFileSync(join(dir, path), 'utf8') }));
    expect(namedVersions(onDisk).filter((n) => n.version !== after)).toEqual([]);
  });
});
