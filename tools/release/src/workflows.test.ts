// The workflows the release depends on: every action pinned by a full commit SHA with the release it
// names; the version PR runs the generator after `changeset version` (so the bump reaches every
// versioned file); publishing goes through `pnpm release`; the plan drives images and chart.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dir = join(root, '.github/workflows');
const workflows = readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f))
  .map((f) => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }));
const release = workflows.find((w) => w.file === 'release.yml')?.text ?? '';

describe('the workflows', () => {
  it('pin every action by commit SHA, with a version comment', () => {
    expect(workflows.map((w) => w.file)).toEqual(expect.arrayContaining(['ci.yml', 'release.yml']));
    for (const w of workflows) {
      for (const m of w.text.matchAll(/^\s*-?\s*uses:\s*(.+)$/gm)) {
        expect(m[1], `${w.file}: ${m[0].trim()}`).toMatch(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$/);
      }
    }
  });

  it('release: the version PR runs `changeset version` then `pnpm manifests`; publishing is `pnpm release`', () => {
    const scripts = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts['version-packages']).toBe('changeset version && pnpm manifests');
    expect(release).toContain('version-script: bash scripts/toolchain.sh pnpm run version-packages');
    expect(release).toContain('publish-script: bash scripts/toolchain.sh pnpm release');
    expect(release).toContain("NPM_CONFIG_PROVENANCE: 'true'");
    expect(release).toContain('pnpm release --plan --out');
  });

  it('release: multi-arch images with SBOM, provenance and a keyless signature; the chart pushed as OCI', () => {
    for (const want of [
      'id-token: write',
      'platforms: $' + '{{ matrix.image.platforms }}',
      'labels: $' + '{{ matrix.image.labels }}',
      'sbom: true',
      'provenance: mode=max',
      'cosign sign --yes',
      '"$HELM" push',
      'git tag -a "v$VERSION"',
    ]) {
      expect(release).toContain(want);
    }
  });

  it('release: the kubectl plugin compiled per krew platform, packed with its manifest, attached to v<version>', () => {
    for (const want of [
      "jq -r '.krew.archives[]",
      'ENTRY=dist/kubectl-claimkit.js bash scripts/toolchain.sh bash packages/cli/scripts/compile.sh',
      '--target "$target"',
      'pnpm release --krew "$RUNNER_TEMP/krew"',
      'gh release create "v$VERSION" --verify-tag',
      'needs: [plan, tag]',
    ]) {
      expect(release).toContain(want);
    }
  });

  it('ci: runs the README test command', () => {
    expect(workflows.find((w) => w.file === 'ci.yml')?.text).toMatch(/\n\s+- run: npm test\n/);
  });
});
