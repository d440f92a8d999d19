// The parts of `pnpm release --publish` decided without a registry: where each artefact goes, the
// checksums file, the deploy archive (reproducible from the commit), and the command line. The
// pushes themselves run against real registries in apps/e2e/src/node/release-publish.test.ts and
// tools/consumer-test.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseImageRef } from './oci-registry.ts';
import { releasePlan } from './plan.ts';
import { type PublishedArtefact, publishRefs, sha256sums, writeDeployArchive } from './publish.ts';
import { readWorkspace } from './workspace.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'claimkit-publish-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function plan() {
  const decided = releasePlan(readWorkspace(root, 'a'.repeat(40)));
  if ('errors' in decided) throw new Error(decided.errors.join('\n'));
  return decided.plan;
}

describe('publishRefs', () => {
  it('puts each image at <repository>/<component> under the version and minor tags, the chart under charts/', () => {
    const p = plan();
    const refs = publishRefs(p, { ociRepository: 'oci://10.0.0.1:5000/claimkit/' });
    const [major, minor] = p.version.split('.');
    expect(refs.images.map((i) => i.component).sort()).toEqual(['cli', 'controller', 'webhook']);
    for (const i of refs.images)
      expect(i.refs).toEqual([
        `10.0.0.1:5000/claimkit/${i.component}:${p.version}`,
        `10.0.0.1:5000/claimkit/${i.component}:${major}.${minor}`,
      ]);
    expect(refs.chart).toEqual({
      repository: 'oci://10.0.0.1:5000/claimkit/charts',
      ref: `10.0.0.1:5000/claimkit/charts/claimkit:${p.version}`,
    });
    expect(refs.npm.map((n) => n.name)).toEqual(p.npm.map((n) => n.name));
    expect(refs.deployArchive).toBe(`claimkit-deploy-${p.version}.tar.gz`);
    expect(refs.report).toBe(`release-${p.version}.json`);
  });

  it('with the public repository, names exactly what the release plan names', () => {
    const p = plan();
    const refs = publishRefs(p, { ociRepository: 'ghcr.io/claimkit' });
    expect(refs.images.flatMap((i) => i.refs).sort()).toEqual(p.images.flatMap((i) => i.refs).sort());
    expect(refs.chart.repository).toBe(p.chart.repository);
    expect(refs.chart.ref).toBe(p.chart.ref);
  });

  it('image references parse into host, name and tag (a port is not a tag)', () => {
    expect(parseImageRef('10.0.0.1:5000/claimkit/controller:0.2.0')).toEqual({
      host: '10.0.0.1:5000',
      name: 'claimkit/controller',
      tag: '0.2.0',
    });
    expect(() => parseImageRef('10.0.0.1:5000/claimkit/controller')).toThrow(/HOST\/NAME:TAG/);
    expect(() => parseImageRef('controller:1')).toThrow(/HOST\/NAME:TAG/);
  });
});

describe('the release files', () => {
  it('SHA256SUMS lists the files only, in `sha256sum -c` form', () => {
    const artefacts: PublishedArtefact[] = [
      {
        kind: 'image',
        name: 'controller',
        refs: ['r/controller:1'],
        size: 1,
        digest: `sha256:${'1'.repeat(64)}`,
      },
      { kind: 'file', name: 'a.tgz', refs: ['/x/a.tgz'], size: 2, digest: `sha256:${'2'.repeat(64)}` },
      { kind: 'file', name: 'b.tar.gz', refs: ['/x/b.tar.gz'], size: 3, digest: `sha256:${'3'.repeat(64)}` },
    ];
    expect(sha256sums(artefacts)).toBe(`${'2'.repeat(64)}  a.tgz\n${'3'.repeat(64)}  b.tar.gz\n`);
  });

  it('deploy/ archives reproducibly from the commit: same bytes twice, under claimkit-deploy-<version>/', () => {
    const revision = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const a = join(scratch, 'one', 'claimkit-deploy-9.9.9.tar.gz');
    const b = join(scratch, 'two', 'claimkit-deploy-9.9.9.tar.gz');
    for (const f of [a, b]) {
      execFileSync('mkdir', ['-p', join(f, '..')]);
      writeDeployArchive(root, revision, f);
    }
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
    const listing = execFileSync('tar', ['-tzvf', a], { encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(listing.some((l) => l.endsWith('claimkit-deploy-9.9.9/crds/'))).toBe(true);
    expect(listing.some((l) => l.endsWith('claimkit-deploy-9.9.9/helm/claimkit/Chart.yaml'))).toBe(true);
    for (const l of listing) expect(l, l).toMatch(/^\S+ 0\/0 /);
  });
});

describe('pnpm release --publish on the command line', () => {
  const main = fileURLToPath(new URL('./main.ts', import.meta.url));
  const run = (args: string[]) =>
    spawnSync(process.execPath, ['--conditions=@claimkit/source', main, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('names every target it lacks, exit 2, before reading anything', () => {
    const r = run(['--publish', '--oci-repository', 'localhost:5000/claimkit']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('pnpm release: --publish needs --npm-registry, --assets (see --help)\n');
  });

  it('a flag without its value is a usage error', () => {
    const r = run(['--publish', '--npm-registry', '--assets', '/tmp/x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('pnpm release: --npm-registry needs a URL (see --help)\n');
  });

  it('--help documents the targets and the exit codes', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    for (const s of [
      '--npm-registry URL',
      '--oci-repository REPO',
      '--ca-file FILE',
      '--assets DIR',
      '3 refused',
    ])
      expect(r.stdout).toContain(s);
  });
});
