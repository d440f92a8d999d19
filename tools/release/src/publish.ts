// `pnpm release --publish`: one version of every artefact, to the registries it is given, with the
// ordinary clients: `npm publish` of each package's tarball, an OCI push of each component image
// (skopeo copy from the OCI archive apps/e2e/images/build-images.sh builds), `helm push` of the
// packaged chart, and the release's files (deploy/ as an archive, the chart package, the npm
// tarballs, SHA256SUMS, release-<version>.json with every name, size and digest) in a directory that
// stands for the GitHub release. The e2e gives it the local registries, the workflow the public ones.
//
// A version is published once: before anything is pushed, every registry is asked whether it holds
// the version already, and if any does the release is refused, naming each; nothing is overwritten.
// Images and the chart go first, npm last (npm never takes a version back, even after an unpublish).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { digestsOf, packageChart, packPackage } from './artefacts.ts';
import { exclusively } from './dir-lock.ts';
import { claimkitCacheDir, packageDocument } from './npm-registry.ts';
import { manifestDigest, type RegistryAccess } from './oci-registry.ts';
import type { ReleasePlan } from './plan.ts';

export interface PublishTarget {
  /** The npm registry's URL (https://registry.npmjs.org/ in the workflow). */
  npmRegistry: string;
  /** Its token (NODE_AUTH_TOKEN); none for a registry that takes anonymous publishes. */
  npmToken?: string;
  /** HOST[:PORT]/PATH: each image at <it>/<component>, the chart at oci://<it>/charts/<name>. */
  ociRepository: string;
  /** A PEM bundle the OCI registry's certificate chains to. */
  caFile?: string;
  /** The OCI registry speaks http (a test registry). */
  plainHttp?: boolean;
  /** Where the release's files are written (the GitHub release's assets in the workflow). */
  assetsDir: string;
}

/** Every reference a publish writes, decided from the plan and the target alone. */
export interface PublishRefs {
  version: string;
  npm: { name: string; distTag: string; dir: string }[];
  images: { component: string; refs: string[] }[];
  chart: { repository: string; ref: string };
  deployArchive: string;
  report: string;
}

export function publishRefs(plan: ReleasePlan, target: Pick<PublishTarget, 'ociRepository'>): PublishRefs {
  const oci = target.ociRepository.replace(/^oci:\/\//, '').replace(/\/+$/, '');
  return {
    version: plan.version,
    npm: plan.npm.map((p) => ({ name: p.name, distTag: p.distTag, dir: p.dir })),
    images: plan.images.map((i) => ({
      component: i.component,
      refs: i.tags.map((t) => `${oci}/${i.component}:${t}`),
    })),
    chart: { repository: `oci://${oci}/charts`, ref: `${oci}/charts/${plan.chart.name}:${plan.version}` },
    deployArchive: `claimkit-deploy-${plan.version}.tar.gz`,
    report: `release-${plan.version}.json`,
  };
}

/** What the registries already hold of this version (each entry names where); empty: publish. */
export async function alreadyPublished(refs: PublishRefs, target: PublishTarget): Promise<string[]> {
  const held: string[] = [];
  const access = ociAccess(target);
  const exact = (r: string) => r.endsWith(`:${refs.version}`);
  // The minor tag (1.2) moves with each patch release; only the version's own tag is final.
  for (const ref of [...refs.images.flatMap((i) => i.refs.filter(exact)), refs.chart.ref]) {
    const digest = await manifestDigest(ref, access);
    if (digest) held.push(`${ref} (${digest})`);
  }
  for (const p of refs.npm) {
    const versions = await npmVersions(target, p.name);
    if (versions.includes(refs.version)) held.push(`${p.name}@${refs.version} on ${target.npmRegistry}`);
  }
  if (existsSync(join(target.assetsDir, refs.report))) held.push(join(target.assetsDir, refs.report));
  return held;
}

function ociAccess(t: PublishTarget): RegistryAccess {
  return { ...(t.caFile ? { caFile: t.caFile } : {}), ...(t.plainHttp ? { plainHttp: true } : {}) };
}

function registryUrl(t: PublishTarget): string {
  return t.npmRegistry.endsWith('/') ? t.npmRegistry : `${t.npmRegistry}/`;
}

/** The versions the npm registry has of a package ([] when it has none: 404). */
export async function npmVersions(
  t: Pick<PublishTarget, 'npmRegistry' | 'npmToken'>,
  name: string,
): Promise<string[]> {
  const doc = await packageDocument(t.npmRegistry, name, t.npmToken);
  return Object.keys(doc?.versions ?? {});
}

export interface PublishedArtefact {
  kind: 'npm' | 'image' | 'chart' | 'file';
  name: string;
  /** Where it was published: the package@version, the image or chart refs, the file. */
  refs: string[];
  size: number;
  /** sha256:… of the bytes (the tarball, the archive) or the manifest (images, the chart). */
  digest: string;
}

export interface PublishReport {
  version: string;
  revision: string;
  publishedAt: string;
  target: { npmRegistry: string; ociRepository: string; assetsDir: string };
  artefacts: PublishedArtefact[];
}

export interface PublishDeps {
  /** Builds the component images; returns component → OCI archive. */
  buildImages(components: string[]): Record<string, string>;
  helm: string;
  log(line: string): void;
}

/** Runs a client to completion: its stdout and stderr together (helm prints the pushed digest on stderr). */
function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} failed (exit ${r.status}):\n${(r.stderr || r.stdout).slice(-3000)}`,
    );
  return `${r.stdout}${r.stderr}`;
}

/** Publishes the plan's version to the target; refuses (throws, nothing pushed) when any is there. */
export async function publish(
  root: string,
  plan: ReleasePlan,
  target: PublishTarget,
  deps: PublishDeps,
): Promise<PublishReport> {
  const refs = publishRefs(plan, target);
  const held = await alreadyPublished(refs, target);
  if (held.length > 0)
    throw new PublishRefused(
      `claimkit ${plan.version} is already published (a version is published once; release a new one):\n${held.map((h) => `  ${h}`).join('\n')}`,
    );
  mkdirSync(target.assetsDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'claimkit-publish-'));
  const artefacts: PublishedArtefact[] = [];
  try {
    // Build everything before the first push: a failed build publishes nothing.
    // pnpm pack runs each package's prepack, which builds dist/ from scratch.
    deps.log('packing the packages');
    const tarballs = refs.npm.map((p) => {
      const packed = packPackage(root, p.dir, target.assetsDir);
      if (packed.name !== p.name || packed.version !== plan.version)
        throw new Error(
          `${p.dir}: packed ${packed.name}@${packed.version}, planned ${p.name}@${plan.version}`,
        );
      return { ...p, packed };
    });
    const chart = packageChart(deps.helm, root, plan.chart.dir, join(work, 'chart'));
    copyFileSync(chart.file, join(target.assetsDir, basename(chart.file)));
    const deployArchive = join(target.assetsDir, refs.deployArchive);
    writeDeployArchive(root, plan.revision, deployArchive);
    deps.log(`building the images (${refs.images.map((i) => i.component).join(', ')})`);
    const archives = deps.buildImages(refs.images.map((i) => i.component));

    const certDir = join(work, 'certs');
    mkdirSync(certDir);
    if (target.caFile) copyFileSync(target.caFile, join(certDir, 'ca.crt'));
    for (const image of refs.images) {
      const archive = archives[image.component];
      if (!archive) throw new Error(`no image archive was built for ${image.component}`);
      let digest = '';
      for (const ref of image.refs) {
        deps.log(`pushing ${ref}`);
        const digestFile = join(work, `${image.component}.digest`);
        run('skopeo', [
          'copy',
          '--quiet',
          '--retry-times',
          '3',
          ...(target.plainHttp ? ['--dest-tls-verify=false'] : ['--dest-cert-dir', certDir]),
          '--digestfile',
          digestFile,
          `oci-archive:${archive}`,
          `docker://${ref}`,
        ]);
        digest = readFileSync(digestFile, 'utf8').trim();
      }
      artefacts.push({
        kind: 'image',
        name: image.component,
        refs: image.refs,
        size: Number(execFileSync('stat', ['-c', '%s', archive], { encoding: 'utf8' }).trim()),
        digest,
      });
    }

    deps.log(`pushing the chart to ${refs.chart.repository}`);
    const pushed = run(
      deps.helm,
      [
        'push',
        chart.file,
        refs.chart.repository,
        ...(target.plainHttp ? ['--plain-http'] : target.caFile ? ['--ca-file', target.caFile] : []),
      ],
      {},
    );
    const chartDigest = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(pushed)?.[1];
    if (!chartDigest) throw new Error(`helm push printed no digest:\n${pushed}`);
    artefacts.push({
      kind: 'chart',
      name: plan.chart.name,
      refs: [refs.chart.ref],
      size: chart.size,
      digest: chartDigest,
    });

    for (const p of tarballs) {
      deps.log(`npm publish ${p.name}@${plan.version} (${p.distTag})`);
      npmPublish(p.packed.file, p.distTag, target);
      artefacts.push({
        kind: 'npm',
        name: p.name,
        refs: [`${p.name}@${plan.version}`],
        size: p.packed.size,
        digest: p.packed.sha256,
      });
    }

    for (const file of [
      deployArchive,
      join(target.assetsDir, basename(chart.file)),
      ...tarballs.map((t) => t.packed.file),
    ]) {
      const d = digestsOf(readFileSync(file));
      artefacts.push({ kind: 'file', name: basename(file), refs: [file], size: d.size, digest: d.sha256 });
    }
    writeFileSync(join(target.assetsDir, 'SHA256SUMS'), sha256sums(artefacts));
    const report: PublishReport = {
      version: plan.version,
      revision: plan.revision,
      publishedAt: new Date().toISOString(),
      target: {
        npmRegistry: target.npmRegistry,
        ociRepository: target.ociRepository,
        assetsDir: target.assetsDir,
      },
      artefacts,
    };
    writeFileSync(join(target.assetsDir, refs.report), `${JSON.stringify(report, null, 2)}\n`);
    return report;
  } catch (e) {
    const pushed = artefacts.filter((a) => a.kind !== 'file').flatMap((a) => a.refs);
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}\n${
        pushed.length > 0
          ? `published before the failure (they stay: a version is published once; release the next one):\n${pushed.map((r) => `  ${r}`).join('\n')}`
          : 'nothing was published'
      }`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `npm publish TARBALL` to the target's registry under a dist-tag, with its token in a userconfig of
 * its own (the user's ~/.npmrc is not read, nor changed). npm itself refuses a version the registry has.
 */
export function npmPublish(
  tarball: string,
  distTag: string,
  target: Pick<PublishTarget, 'npmRegistry' | 'npmToken'>,
): void {
  const work = mkdtempSync(join(tmpdir(), 'claimkit-npm-publish-'));
  try {
    const u = new URL(registryUrl(target as PublishTarget));
    const npmrc = join(work, 'npmrc');
    writeFileSync(
      npmrc,
      `registry=${u.href}\n${target.npmToken ? `//${u.host}${u.pathname}:_authToken=${target.npmToken}\n` : ''}`,
    );
    run('npm', ['publish', tarball, '--registry', u.href, '--userconfig', npmrc, '--tag', distTag], {
      cwd: work,
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `fn` (packing) while no other process packs the same workspace: `pnpm pack` deletes and rebuilds
 * each package's dist/ (prepack), so two packers of one tree (the consumer test, the release e2e)
 * would break each other's tarballs.
 */
export function whilePacking<T>(root: string, fn: () => T): T {
  const locks = join(claimkitCacheDir(), 'locks');
  mkdirSync(locks, { recursive: true });
  const key = createHash('sha256').update(resolve(root)).digest('hex').slice(0, 16);
  return exclusively(join(locks, `pack-${key}`), fn);
}

export class PublishRefused extends Error {
  override name = 'PublishRefused';
}

/** `sha256sum -c` input for the release's files. */
export function sha256sums(artefacts: PublishedArtefact[]): string {
  return artefacts
    .filter((a) => a.kind === 'file')
    .map((a) => `${a.digest.replace(/^sha256:/, '')}  ${a.name}\n`)
    .join('');
}

/** deploy/ as the release archive, reproducible from the commit (sorted, owner 0, its commit time). */
export function writeDeployArchive(root: string, revision: string, file: string): void {
  // The commit's time; a tree checked out from it (previous-release.ts) carries it on its HEAD.
  let mtime = '@0';
  for (const rev of [revision, 'HEAD']) {
    try {
      mtime = `@${execFileSync('git', ['-C', root, 'show', '-s', '--format=%ct', rev], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim()}`;
      break;
    } catch {
      // not this repository's commit, or not a git checkout (then the epoch)
    }
  }
  run('tar', [
    '--sort=name',
    `--mtime=${mtime}`,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--transform',
    `s,^deploy,${basename(file).replace(/\.tar\.gz$/, '')},`,
    '-I',
    'gzip -n',
    '-cf',
    file,
    '-C',
    root,
    'deploy',
  ]);
}

/** The images from build-images.sh (its stdout: `name<TAB>ref<TAB>archive` per image). */
export function buildImagesWithScript(root: string, components: string[]): Record<string, string> {
  const script = join(root, 'apps/e2e/images/build-images.sh');
  const r = spawnSync('bash', [script, ...components], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 << 20,
  });
  if (r.status !== 0) throw new Error(`${script} ${components.join(' ')} failed (exit ${r.status})`);
  const out: Record<string, string> = {};
  for (const line of r.stdout.split('\n').filter(Boolean)) {
    const [name, , archive] = line.split('\t');
    if (name && archive) out[name] = archive;
  }
  return out;
}
