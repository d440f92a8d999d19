// The release plan: every artefact a release of this workspace publishes, decided from plain data
// (workspace.ts gathers it) so that `pnpm release --dry-run` prints, the release workflow runs and
// the tests check one and the same plan. npm packages of the fixed changesets group, one multi-arch
// image per component with OCI labels, the Helm chart as an OCI artifact, git tags.
import { fixedGroupVersion, type WorkspacePackage } from '@claimkit/manifests/version';
import { type KrewArtefact, krewArtefact } from './krew.ts';

/** What the plan is decided from. */
export interface Workspace {
  /** The fixed changesets group (its members publish together, at one version). */
  fixedGroup: string[];
  packages: (WorkspacePackage & { license?: string; description?: string; repository?: string })[];
  /** The commit being released. */
  revision: string;
  /** Each image component's Dockerfile (relative path) and image repository, without a tag. */
  images: { component: string; dockerfile: string; repository: string; title: string; description: string }[];
  /** deploy/helm/claimkit/Chart.yaml. */
  chart: { dir: string; name: string; version: string; appVersion: string };
  /** Where the chart is pushed: an OCI repository (oci://ghcr.io/claimkit/charts). */
  chartRepository: string;
}

export interface NpmArtefact {
  name: string;
  version: string;
  dir: string;
  /** The npm dist-tag: latest for a release, next for a prerelease. */
  distTag: 'latest' | 'next';
}

export interface ImageArtefact {
  component: string;
  dockerfile: string;
  repository: string;
  tags: string[];
  /** repository:tag for every tag. */
  refs: string[];
  platforms: string[];
  /** The OCI annotations, as image labels (and as the workflow passes them to the build). */
  labels: Record<string, string>;
  /** The Dockerfile's build arguments that fill its version, revision and source labels. */
  buildArgs: Record<string, string>;
}

export interface ChartArtefact {
  name: string;
  version: string;
  appVersion: string;
  dir: string;
  /** The file `helm package` writes. */
  packageFile: string;
  /** `helm push <packageFile> <repository>` ... */
  repository: string;
  /** ... publishes this reference. */
  ref: string;
}

export interface ReleasePlan {
  version: string;
  prerelease: boolean;
  revision: string;
  npm: NpmArtefact[];
  images: ImageArtefact[];
  chart: ChartArtefact;
  /** The kubectl plugin: an archive per platform on the GitHub release, and its krew manifest. */
  krew: KrewArtefact;
  /** The git tags the release creates: one per package (as `changeset publish` does) and v<version>. */
  gitTags: string[];
}

export const PLATFORMS = ['linux/amd64', 'linux/arm64'];

/** A package.json `repository` (string or object, git+ and .git forms) as the https URL of the repository. */
export function sourceUrl(repository: string | undefined): string | undefined {
  if (!repository) return undefined;
  const url = repository
    .replace(/^git\+/, '')
    .replace(/\.git$/, '')
    .replace(/^git@github\.com:/, 'https://github.com/')
    .replace(/^github:/, 'https://github.com/');
  return url;
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** The plan, or every reason there is none (the release stops before publishing anything). */
export function releasePlan(ws: Workspace): { plan: ReleasePlan } | { errors: string[] } {
  const errors: string[] = [];
  const v = fixedGroupVersion(ws.fixedGroup, ws.packages);
  if ('errors' in v) return { errors: v.errors };
  const version = v.version;
  const semver = SEMVER.exec(version);
  if (!semver) errors.push(`version ${version} is not a semantic version`);
  if (ws.chart.version !== version || ws.chart.appVersion !== version) {
    errors.push(
      `${ws.chart.dir}/Chart.yaml: version ${ws.chart.version}, appVersion ${ws.chart.appVersion}, want ${version}; run \`pnpm manifests\``,
    );
  }
  if (!/^[0-9a-f]{40}$/.test(ws.revision))
    errors.push(`revision ${JSON.stringify(ws.revision)} is not a commit`);
  const members = ws.packages.filter((p) => ws.fixedGroup.includes(p.name));
  const licenses = [...new Set(members.map((p) => p.license))];
  if (licenses.length !== 1 || !licenses[0])
    errors.push(`the packages' licenses differ or are missing: ${licenses.join(', ')}`);
  const sources = [...new Set(members.map((p) => sourceUrl(p.repository)))];
  if (sources.length !== 1 || !sources[0])
    errors.push(`the packages' repository URLs differ or are missing: ${sources.join(', ')}`);
  if (ws.images.length === 0) errors.push('no images: no packages/*/Dockerfile');
  if (errors.length > 0) return { errors };

  const prerelease = semver![4] !== undefined;
  const tags = prerelease ? [version] : [version, `${semver![1]}.${semver![2]}`];
  const source = sources[0]!;
  const npm: NpmArtefact[] = members
    .map((p) => ({
      name: p.name,
      version,
      dir: p.dir,
      distTag: prerelease ? ('next' as const) : ('latest' as const),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const images: ImageArtefact[] = ws.images.map((i) => {
    const buildArgs = { VERSION: version, REVISION: ws.revision, SOURCE: source };
    return {
      component: i.component,
      dockerfile: i.dockerfile,
      repository: i.repository,
      tags,
      refs: tags.map((t) => `${i.repository}:${t}`),
      platforms: PLATFORMS,
      labels: {
        'org.opencontainers.image.title': i.title,
        'org.opencontainers.image.description': i.description,
        'org.opencontainers.image.licenses': licenses[0]!,
        'org.opencontainers.image.source': source,
        'org.opencontainers.image.version': version,
        'org.opencontainers.image.revision': ws.revision,
      },
      buildArgs,
    };
  });
  const chartRef = ws.chartRepository.replace(/^oci:\/\//, '');
  const chart: ChartArtefact = {
    name: ws.chart.name,
    version,
    appVersion: version,
    dir: ws.chart.dir,
    packageFile: `${ws.chart.name}-${version}.tgz`,
    repository: ws.chartRepository,
    ref: `${chartRef}/${ws.chart.name}:${version}`,
  };
  const gitTags = [...npm.map((p) => `${p.name}@${version}`), `v${version}`];
  const krew = krewArtefact(version, source);
  return { plan: { version, prerelease, revision: ws.revision, npm, images, chart, krew, gitTags } };
}
