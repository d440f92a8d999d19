// The release's one version: the version of the fixed changesets group (.changeset/config.json
// `fixed`), which `changeset version` bumps in every member's package.json together. `pnpm manifests`
// writes it everywhere else a version is named (version-modules.ts, the image tags of deploy/ and
// `claimctl manifests`, the chart's version and appVersion); the release plan reads it from here too.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A workspace package as the release sees it. */
export interface WorkspacePackage {
  name: string;
  version: string;
  /** Its directory, relative to the repository root (packages/core). */
  dir: string;
  private: boolean;
}

/** The package every group is found by: the fixed group is the one that holds core. */
const ANCHOR = '@claimkit/core';

/** The fixed group that holds core, from a parsed .changeset/config.json; every problem as an error. */
export function fixedGroup(config: unknown): { group: string[] } | { errors: string[] } {
  const fixed = (config as { fixed?: unknown } | null)?.fixed;
  if (!Array.isArray(fixed)) return { errors: ['.changeset/config.json: `fixed` is not a list of groups'] };
  const groups = fixed.filter((g): g is string[] => Array.isArray(g) && g.includes(ANCHOR));
  if (groups.length !== 1)
    return { errors: [`.changeset/config.json: ${groups.length} fixed groups hold ${ANCHOR}, want 1`] };
  return { group: [...groups[0]!] };
}

/**
 * The group's one version, or every reason there is none: a member that is not a workspace package,
 * a published package outside the group (it would version on its own), members whose versions differ.
 */
export function fixedGroupVersion(
  group: readonly string[],
  packages: readonly WorkspacePackage[],
): { version: string } | { errors: string[] } {
  const errors: string[] = [];
  const byName = new Map(packages.map((p) => [p.name, p]));
  for (const name of group)
    if (!byName.has(name)) errors.push(`fixed group: ${name} is not a workspace package`);
  for (const p of packages) {
    if (!p.private && !group.includes(p.name))
      errors.push(`${p.dir}/package.json: ${p.name} is published but not in the fixed group`);
  }
  const members = group.flatMap((n) => byName.get(n) ?? []);
  const versions = [...new Set(members.map((p) => p.version))];
  if (versions.length > 1) {
    errors.push(
      `fixed group: the packages have different versions (${members.map((p) => `${p.name}@${p.version}`).join(', ')}); run \`pnpm changeset version\``,
    );
  }
  if (errors.length > 0 || versions[0] === undefined)
    return { errors: errors.length ? errors : ['no version'] };
  return { version: versions[0] };
}

/** The publishable workspace packages: every packages/<dir>/package.json. */
export function readWorkspacePackages(root: string): WorkspacePackage[] {
  const dir = join(root, 'packages');
  return readdirSync(dir)
    .sort()
    .filter((d) => existsSync(join(dir, d, 'package.json')))
    .map((d) => {
      const pkg = JSON.parse(readFileSync(join(dir, d, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
        private?: boolean;
      };
      return { name: pkg.name, version: pkg.version, dir: `packages/${d}`, private: pkg.private === true };
    });
}

/** The release's version, read from the repository at `root`; throws with every problem found. */
export function readWorkspaceVersion(root: string): string {
  const config = JSON.parse(readFileSync(join(root, '.changeset/config.json'), 'utf8')) as unknown;
  const g = fixedGroup(config);
  if ('errors' in g) throw new Error(g.errors.join('\n'));
  const v = fixedGroupVersion(g.group, readWorkspacePackages(root));
  if ('errors' in v) throw new Error(v.errors.join('\n'));
  return v.version;
}
