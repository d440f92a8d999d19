// Gathers what the release plan is decided from: the fixed group and the packages (package.json),
// the commit, each component's Dockerfile (its title and description labels) and image repository
// (core's, which the manifests run), the chart's Chart.yaml.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_COMPONENTS, IMAGE_REGISTRY, imageRepository } from '@claimkit/core';
import { CHART_DIR } from '@claimkit/manifests/chart';
import { fixedGroup, readWorkspacePackages } from '@claimkit/manifests/version';
import { finalLabels, parseDockerfile } from './dockerfile.ts';
import type { Workspace } from './plan.ts';

/** The OCI repository the chart is pushed to, next to the images. */
export const CHART_REPOSITORY = `oci://${IMAGE_REGISTRY}/charts`;

/** The commit: GITHUB_SHA in the workflow, else the work tree's HEAD. */
export function currentRevision(root: string): string {
  if (process.env.GITHUB_SHA) return process.env.GITHUB_SHA;
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export function readWorkspace(root: string, revision = currentRevision(root)): Workspace {
  const config = JSON.parse(readFileSync(join(root, '.changeset/config.json'), 'utf8')) as unknown;
  const g = fixedGroup(config);
  if ('errors' in g) throw new Error(g.errors.join('\n'));
  const packages = readWorkspacePackages(root).map((p) => {
    const pkg = JSON.parse(readFileSync(join(root, p.dir, 'package.json'), 'utf8')) as {
      license?: string;
      description?: string;
      repository?: string | { url?: string };
    };
    const repository = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
    return {
      ...p,
      ...(pkg.license ? { license: pkg.license } : {}),
      ...(pkg.description ? { description: pkg.description } : {}),
      ...(repository ? { repository } : {}),
    };
  });
  const images = IMAGE_COMPONENTS.flatMap((component) => {
    const dockerfile = `packages/${component}/Dockerfile`;
    if (!existsSync(join(root, dockerfile))) return [];
    const labels = finalLabels(parseDockerfile(readFileSync(join(root, dockerfile), 'utf8')));
    return [
      {
        component,
        dockerfile,
        repository: imageRepository(component),
        title: labels['org.opencontainers.image.title'] ?? `claimkit-${component}`,
        description: labels['org.opencontainers.image.description'] ?? '',
      },
    ];
  });
  const chartYaml = readFileSync(join(root, CHART_DIR, 'Chart.yaml'), 'utf8');
  const field = (k: string) => new RegExp(`^${k}:\\s*"?([^"\\n]+)"?\\s*$`, 'm').exec(chartYaml)?.[1] ?? '';
  return {
    fixedGroup: g.group,
    packages,
    revision,
    images,
    chart: {
      dir: CHART_DIR,
      name: field('name'),
      version: field('version'),
      appVersion: field('appVersion'),
    },
    chartRepository: CHART_REPOSITORY,
  };
}
