// The release plan, decided from plain workspace data: every package of the fixed group at the one
// version with its dist-tag, one multi-arch image per Dockerfile with OCI labels and the build
// arguments that fill them, the chart's OCI reference, the git tags; and every reason not to release.
import { fileURLToPath } from 'node:url';
import { CLAIMKIT_VERSION, imageRef, imageRepository } from '@claimkit/core';
import { describe, expect, it } from 'vitest';
import { krewArtefact } from './krew.ts';
import { PLATFORMS, releasePlan, sourceUrl, type Workspace } from './plan.ts';
import { readWorkspace } from './workspace.ts';

const SHA = 'a'.repeat(40);
const GROUP = ['@claimkit/core', '@claimkit/cli'];

/** A workspace of two packages at `version` with one image and the chart at that version. */
function workspace(version: string, ...modifiers: ((w: Workspace) => void)[]): Workspace {
  const w: Workspace = {
    fixedGroup: [...GROUP],
    packages: GROUP.map((name) => ({
      name,
      version,
      dir: `packages/${name.slice('@claimkit/'.length)}`,
      private: false,
      license: 'Apache-2.0',
      repository: 'git+https://github.com/claimkit/claimkit.git',
    })),
    revision: SHA,
    images: [
      {
        component: 'cli',
        dockerfile: 'packages/cli/Dockerfile',
        repository: 'ghcr.io/claimkit/cli',
        title: 'claimkit-cli',
        description: 'claimctl',
      },
    ],
    chart: { dir: 'deploy/helm/claimkit', name: 'claimkit', version, appVersion: version },
    chartRepository: 'oci://ghcr.io/claimkit/charts',
  };
  for (const m of modifiers) m(w);
  return w;
}

const plan = (w: Workspace) => {
  const r = releasePlan(w);
  if ('errors' in r) throw new Error(r.errors.join('\n'));
  return r.plan;
};

describe('releasePlan', () => {
  it('publishes each package at the version, tags images version and major.minor, pushes the chart, tags git', () => {
    expect(plan(workspace('1.4.2'))).toEqual({
      version: '1.4.2',
      prerelease: false,
      revision: SHA,
      npm: [
        { name: '@claimkit/cli', version: '1.4.2', dir: 'packages/cli', distTag: 'latest' },
        { name: '@claimkit/core', version: '1.4.2', dir: 'packages/core', distTag: 'latest' },
      ],
      images: [
        {
          component: 'cli',
          dockerfile: 'packages/cli/Dockerfile',
          repository: 'ghcr.io/claimkit/cli',
          tags: ['1.4.2', '1.4'],
          refs: ['ghcr.io/claimkit/cli:1.4.2', 'ghcr.io/claimkit/cli:1.4'],
          platforms: ['linux/amd64', 'linux/arm64'],
          labels: {
            'org.opencontainers.image.title': 'claimkit-cli',
            'org.opencontainers.image.description': 'claimctl',
            'org.opencontainers.image.licenses': 'Apache-2.0',
            'org.opencontainers.image.source': 'https://github.com/claimkit/claimkit',
            'org.opencontainers.image.version': '1.4.2',
            'org.opencontainers.image.revision': SHA,
          },
          buildArgs: { VERSION: '1.4.2', REVISION: SHA, SOURCE: 'https://github.com/claimkit/claimkit' },
        },
      ],
      chart: {
        name: 'claimkit',
        version: '1.4.2',
        appVersion: '1.4.2',
        dir: 'deploy/helm/claimkit',
        packageFile: 'claimkit-1.4.2.tgz',
        repository: 'oci://ghcr.io/claimkit/charts',
        ref: 'ghcr.io/claimkit/charts/claimkit:1.4.2',
      },
      // The kubectl plugin's archives and krew manifest (krew.test.ts checks them).
      krew: krewArtefact('1.4.2', 'https://github.com/claimkit/claimkit'),
      gitTags: ['@claimkit/cli@1.4.2', '@claimkit/core@1.4.2', 'v1.4.2'],
    });
  });

  it('a prerelease goes to the next dist-tag and moves no major.minor image tag', () => {
    const p = plan(workspace('2.0.0-rc.1'));
    expect(p.prerelease).toBe(true);
    expect(p.npm.map((n) => n.distTag)).toEqual(['next', 'next']);
    expect(p.images[0]!.tags).toEqual(['2.0.0-rc.1']);
  });

  it('refuses, with every reason: versions apart, a chart not regenerated, no commit, licenses or sources apart', () => {
    expect(
      releasePlan(
        workspace('1.0.0', (w) => {
          w.packages[1]!.version = '0.9.0';
        }),
      ),
    ).toEqual({
      errors: [
        'fixed group: the packages have different versions (@claimkit/core@1.0.0, @claimkit/cli@0.9.0); run `pnpm changeset version`',
      ],
    });
    expect(
      releasePlan(
        workspace('1.1.0', (w) => {
          w.chart.version = '1.0.0';
          w.revision = 'unknown';
          w.packages[0]!.license = 'MIT';
          w.packages[1]!.repository = 'https://example.invalid/fork.git';
          w.images = [];
        }),
      ),
    ).toEqual({
      errors: [
        'deploy/helm/claimkit/Chart.yaml: version 1.0.0, appVersion 1.1.0, want 1.1.0; run `pnpm manifests`',
        'revision "unknown" is not a commit',
        "the packages' licenses differ or are missing: MIT, Apache-2.0",
        "the packages' repository URLs differ or are missing: https://github.com/claimkit/claimkit, https://example.invalid/fork",
        'no images: no packages/*/Dockerfile',
      ],
    });
    expect(releasePlan(workspace('1.0'))).toEqual({ errors: ['version 1.0 is not a semantic version'] });
  });

  it('reads package.json repository forms as the https URL of the repository', () => {
    expect(sourceUrl('git+https://github.com/claimkit/claimkit.git')).toBe(
      'https://github.com/claimkit/claimkit',
    );
    expect(sourceUrl('git@github.com:claimkit/claimkit.git')).toBe('https://github.com/claimkit/claimkit');
    expect(sourceUrl('github:claimkit/claimkit')).toBe('https://github.com/claimkit/claimkit');
    expect(sourceUrl(undefined)).toBeUndefined();
  });
});

describe('the plan of this repository', () => {
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const p = plan(readWorkspace(root, SHA));

  it('releases the version the code and the manifests name, every published package, and an image per component', () => {
    expect(p.version).toBe(CLAIMKIT_VERSION);
    expect(p.npm.map((n) => n.name)).toEqual([
      '@claimkit/cli',
      '@claimkit/controller',
      '@claimkit/core',
      '@claimkit/kube',
      '@claimkit/webhook',
    ]);
    expect(p.images.map((i) => i.component)).toEqual(['controller', 'webhook', 'cli']);
    expect(p.images.every((i) => i.platforms === PLATFORMS)).toBe(true);
    // The images the manifests (deploy/, the chart's default) run are the ones the release pushes.
    for (const c of ['controller', 'webhook'] as const) {
      const image = p.images.find((i) => i.component === c)!;
      expect(image.repository).toBe(imageRepository(c));
      expect(image.refs).toContain(imageRef(c));
    }
    expect(p.chart).toMatchObject({
      name: 'claimkit',
      version: CLAIMKIT_VERSION,
      appVersion: CLAIMKIT_VERSION,
    });
  });
});
