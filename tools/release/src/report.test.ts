// The dry run prints every artefact: each npm package with its tarball's integrity and shasum (as
// computed from the bytes: npm's sha512/sha1), each image ref with its labels, the chart with its
// digest or why none, the git tags.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestsOf } from './artefacts.ts';
import { releasePlan, type Workspace } from './plan.ts';
import { formatReport } from './report.ts';

const ws: Workspace = {
  fixedGroup: ['@claimkit/core'],
  packages: [
    {
      name: '@claimkit/core',
      version: '3.1.0',
      dir: 'packages/core',
      private: false,
      license: 'Apache-2.0',
      repository: 'https://github.com/claimkit/claimkit',
    },
  ],
  revision: 'c'.repeat(40),
  images: [
    {
      component: 'webhook',
      dockerfile: 'packages/webhook/Dockerfile',
      repository: 'ghcr.io/claimkit/webhook',
      title: 'claimkit-webhook',
      description: 'w',
    },
  ],
  chart: { dir: 'deploy/helm/claimkit', name: 'claimkit', version: '3.1.0', appVersion: '3.1.0' },
  chartRepository: 'oci://ghcr.io/claimkit/charts',
};

describe('digestsOf', () => {
  it("is npm's integrity (sha512, base64) and shasum (sha1, hex), and the OCI sha256", () => {
    const bytes = Buffer.from('a tarball');
    expect(digestsOf(bytes)).toEqual({
      integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
      shasum: createHash('sha1').update(bytes).digest('hex'),
      sha256: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
      size: 9,
    });
    expect(digestsOf(Buffer.from('')).shasum).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
  });
});

describe('formatReport', () => {
  const r = releasePlan(ws);
  if ('errors' in r) throw new Error(r.errors.join('\n'));
  const tgz = digestsOf(Buffer.from('core'));
  const chart = digestsOf(Buffer.from('chart'));

  it('names every artefact with its version and what packing computed', () => {
    const text = formatReport(r.plan, {
      npm: {
        '@claimkit/core': {
          ...tgz,
          name: '@claimkit/core',
          version: '3.1.0',
          file: '/t/claimkit-core-3.1.0.tgz',
          files: 3,
        },
      },
      chart: { ...chart, file: '/t/claimkit-3.1.0.tgz' },
    });
    for (const want of [
      '@claimkit/core@3.1.0  dist-tag latest',
      `integrity ${tgz.integrity}`,
      `shasum    ${tgz.shasum}`,
      'claimkit-core-3.1.0.tgz (3 files, 4 bytes)',
      'ghcr.io/claimkit/webhook:3.1.0, ghcr.io/claimkit/webhook:3.1',
      'label org.opencontainers.image.version=3.1.0',
      `label org.opencontainers.image.revision=${'c'.repeat(40)}`,
      'oci://ghcr.io/claimkit/charts/claimkit:3.1.0 (appVersion 3.1.0)',
      `digest    ${chart.sha256}`,
      'kubectl plugin (krew claimkit v3.1.0; attached to the GitHub release v3.1.0):',
      'kubectl-claimkit_v3.1.0_darwin_arm64.tar.gz (darwin/arm64, deno compile --target aarch64-apple-darwin)',
      'claimkit.yaml: the krew manifest',
      '@claimkit/core@3.1.0\n  v3.1.0\n',
    ]) {
      expect(text).toContain(want);
    }
  });

  it('says why the chart has no digest when helm is missing', () => {
    const text = formatReport(r.plan, { npm: {}, chart: { skipped: 'no helm' } });
    expect(text).toContain('claimkit-3.1.0.tgz: not packaged (no helm)');
  });
});
