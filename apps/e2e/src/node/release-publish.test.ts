// A release published as the release workflow publishes it, to real registries on this machine, and
// installed by version as a user installs it. `pnpm release --publish` (tools/release/src/publish.ts)
// pushes every npm package to a verdaccio registry, every component image and the chart to the OCI
// registry beside the real node (CNCF distribution, TLS with the run's CA), and writes the release's
// files with their checksums. Then `helm install oci://<registry>/claimkit/charts/claimkit
// --version <version>`: the real node's containerd *pulls* each image from that registry (its hosts
// configuration trusts the CA; no image of this path is imported), claims bind on running
// containers, and publishing the same version again is refused with nothing overwritten.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAIMKIT_VERSION, type PodClaim } from '@claimkit/core';
import { type NpmRegistry, packageDocument, startNpmRegistry } from '@claimkit/release/npm-registry';
import { manifestDigest, readManifest } from '@claimkit/release/oci-registry';
import type { PublishReport } from '@claimkit/release/publish';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { getOrUndefined, kube, until } from '../controller/helpers.ts';
import { repoRoot } from '../harness/index.ts';
import { createTestNamespace, describeOnRealNode, e2eClients, e2eCluster } from '../harness/vitest.ts';
import { runHelm } from '../helm/subchart.ts';
import {
  deploymentsReady,
  prepareReleaseNamespace,
  RELEASE,
  removeRelease,
  SYSTEM,
  webhookReachable,
} from './chart-release.ts';
import { realPool, runningContainer } from './helpers.ts';

const helmInfo = inject('claimkitHelm');
const COMPONENTS = ['cli', 'controller', 'webhook'];
const PACKAGES = [
  '@claimkit/cli',
  '@claimkit/controller',
  '@claimkit/core',
  '@claimkit/kube',
  '@claimkit/webhook',
];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `pnpm release ARGS` as a user runs it (the toolchain's Node, the workspace's sources). */
function release(args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@claimkit/source', join(repoRoot, 'tools/release/src/main.ts'), ...args],
      { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      process.stderr.write(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 900_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

describeOnRealNode(
  'a release published to real registries and installed by version',
  ['controller', 'webhook', 'cli', 'workload'],
  (node) => {
    const helm = helmInfo.path ?? '';
    if (!helm) throw new Error(`no helm for the release: ${helmInfo.error}`);
    const scratch = mkdtempSync(join(tmpdir(), 'claimkit-release-'));
    const assets = join(scratch, 'assets');
    const oci = `${node.registry.host}/claimkit`;
    const access = { caFile: node.registry.caFile };
    const helmEnv = { ...process.env, KUBECONFIG: e2eCluster().kubeconfigPath };
    let npm: NpmRegistry | undefined;
    let report: PublishReport;
    let published: Ran;
    let ns = '';
    const publishArgs = () => [
      '--publish',
      '--npm-registry',
      npm!.url,
      '--oci-repository',
      oci,
      '--ca-file',
      node.registry.caFile,
      '--assets',
      assets,
      '--json',
    ];
    const releaseEnv = () => ({ ...process.env, CLAIMKIT_HELM: helm, NODE_AUTH_TOKEN: npm!.token });

    beforeAll(async () => {
      npm = await startNpmRegistry({ dir: join(scratch, 'npm-registry') });
      published = await release(publishArgs(), releaseEnv());
      if (published.code !== 0)
        throw new Error(
          `pnpm release --publish failed (exit ${published.code}):\n${published.stderr.slice(-4000)}`,
        );
      report = JSON.parse(published.stdout) as PublishReport;
      process.stderr.write(
        `[release] published ${CLAIMKIT_VERSION} in ${(published.ms / 1000).toFixed(1)} s\n`,
      );
    }, 900_000);

    afterAll(async () => {
      await removeRelease(helm, helmEnv, ns);
      await npm?.stop();
      rmSync(scratch, { recursive: true, force: true });
    }, 240_000);

    it('publishes every artefact of the version once: npm packages, images, the chart, the files with their checksums', async () => {
      expect(report.version).toBe(CLAIMKIT_VERSION);
      const byKind = (k: string) => report.artefacts.filter((a) => a.kind === k);
      expect(
        byKind('npm')
          .map((a) => a.name)
          .sort(),
      ).toEqual(PACKAGES);
      expect(
        byKind('image')
          .map((a) => a.name)
          .sort(),
      ).toEqual(COMPONENTS);
      expect(byKind('chart').map((a) => a.refs)).toEqual([[`${oci}/charts/claimkit:${CLAIMKIT_VERSION}`]]);
      // Each image under its version and its minor tag, the digest the registry serves for both.
      const [major, minor] = CLAIMKIT_VERSION.split('.');
      for (const image of byKind('image')) {
        expect(image.refs).toEqual([
          `${oci}/${image.name}:${CLAIMKIT_VERSION}`,
          `${oci}/${image.name}:${major}.${minor}`,
        ]);
        for (const ref of image.refs) expect(await manifestDigest(ref, access)).toBe(image.digest);
        const manifest = JSON.parse((await readManifest(image.refs[0]!, access)).body ?? '{}') as {
          layers?: unknown[];
        };
        expect(manifest.layers?.length).toBeGreaterThan(0);
      }
      const chart = byKind('chart')[0]!;
      expect(await manifestDigest(chart.refs[0]!, access)).toBe(chart.digest);
      const chartManifest = JSON.parse((await readManifest(chart.refs[0]!, access)).body ?? '{}') as {
        config?: { mediaType?: string };
      };
      expect(chartManifest.config?.mediaType).toBe('application/vnd.cncf.helm.config.v1+json');
      // npm: the registry serves each package's version with the tarball's own sha1 and integrity.
      for (const p of byKind('npm')) {
        const doc = (await (await fetch(`${npm!.url}${p.name.replace('/', '%2f')}`)).json()) as {
          versions: Record<string, { dist: { shasum: string; integrity: string } }>;
          'dist-tags': Record<string, string>;
        };
        expect(Object.keys(doc.versions)).toEqual([CLAIMKIT_VERSION]);
        expect(doc['dist-tags'].latest).toBe(CLAIMKIT_VERSION);
        const tarball = report.artefacts.find(
          (a) => a.kind === 'file' && a.name.startsWith(p.name.slice(1).replace('/', '-')),
        );
        expect(tarball, `${p.name}'s tarball among the release's files`).toBeDefined();
        const { createHash } = await import('node:crypto');
        expect(doc.versions[CLAIMKIT_VERSION]!.dist.shasum).toBe(
          createHash('sha1').update(readFileSync(tarball!.refs[0]!)).digest('hex'),
        );
      }
      // The release's files: deploy/ as an archive, the chart package, the tarballs; sha256sum -c passes.
      const files = byKind('file').map((a) => a.name);
      expect(files).toContain(`claimkit-deploy-${CLAIMKIT_VERSION}.tar.gz`);
      expect(files).toContain(`claimkit-${CLAIMKIT_VERSION}.tgz`);
      const check = await new Promise<Ran>((resolve) => {
        const child = spawn('sha256sum', ['-c', 'SHA256SUMS'], { cwd: assets });
        let stdout = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          stdout += d;
        });
        child.once('close', (code) => resolve({ code, stdout, stderr: '', ms: 0 }));
      });
      expect(check.code, check.stdout).toBe(0);
      expect(check.stdout.trim().split('\n')).toHaveLength(files.length);
      const deploy = await new Promise<string>((resolve) => {
        const child = spawn('tar', ['-tzf', join(assets, `claimkit-deploy-${CLAIMKIT_VERSION}.tar.gz`)]);
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
        });
        child.once('close', () => resolve(out));
      });
      expect(deploy).toContain(`claimkit-deploy-${CLAIMKIT_VERSION}/crds/`);
      expect(deploy).toContain(`claimkit-deploy-${CLAIMKIT_VERSION}/helm/claimkit/Chart.yaml`);
    });

    it('helm install oci://…/claimkit --version: the real node pulls every image from the registry; claims bind on running containers', async () => {
      const values = await prepareReleaseNamespace(scratch);
      const withImage = (component: string, v: unknown) => ({
        ...(v as object),
        image: { repository: `${oci}/${component}` },
      });
      const valuesFile = join(scratch, 'values.yaml');
      writeFileSync(
        valuesFile,
        JSON.stringify({
          ...values,
          controller: withImage('controller', values.controller),
          webhook: withImage('webhook', values.webhook),
        }),
      );
      const t0 = Date.now();
      const installed = await runHelm(
        helm,
        [
          'install',
          RELEASE,
          `oci://${oci}/charts/claimkit`,
          '--version',
          CLAIMKIT_VERSION,
          '--ca-file',
          node.registry.caFile,
          '-n',
          SYSTEM,
          '-f',
          valuesFile,
        ],
        helmEnv,
      );
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stderr + installed.stdout).toMatch(
        new RegExp(`Pulled: ${oci}/charts/claimkit:${CLAIMKIT_VERSION}`),
      );
      await deploymentsReady('helm install from the OCI registry');
      process.stderr.write(
        `[release] installed by version and rolled out in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
      );
      // Each container runs the image pulled from the registry: its image is the registry's
      // reference and containerd reports the registry's manifest digest for it (an imported image
      // has no digest from that repository).
      const pods = (await e2eClients().core.listNamespacedPod({ namespace: SYSTEM })).items;
      expect(pods.length).toBeGreaterThanOrEqual(3);
      for (const p of pods) {
        for (const s of p.status?.containerStatuses ?? []) {
          const component = p.metadata?.labels?.['app.kubernetes.io/component'] ?? '?';
          const image = report.artefacts.find((a) => a.kind === 'image' && a.name === component);
          expect(
            image,
            `pod ${p.metadata?.name}'s component ${component} is a published image`,
          ).toBeDefined();
          expect(s.image).toBe(`${oci}/${component}:${CLAIMKIT_VERSION}`);
          expect(s.imageID).toBe(`${oci}/${component}@${image!.digest}`);
        }
      }
      ns = await createTestNamespace('release');
      await webhookReachable(ns);
      const c = kube();
      await c.create(realPool(ns, 'real', { minIdle: 1, maxPods: 4 }));
      await c.create({
        apiVersion: 'claimkit.dev/v1alpha1',
        kind: 'PodClaim',
        metadata: { name: 'first', namespace: ns, finalizers: ['claimkit.dev/release'] },
        spec: { poolName: 'real' },
      } as PodClaim);
      let bound: PodClaim | undefined;
      await until(
        `PodClaim ${ns}/first Bound by the controller installed from the registry`,
        async () => {
          bound = (await getOrUndefined(c.get('PodClaim', { namespace: ns, name: 'first' }))) as
            | PodClaim
            | undefined;
          return bound?.status?.phase === 'Bound';
        },
        90_000,
      );
      const pod = await c.get('Pod', { namespace: ns, name: bound!.status!.podName! });
      expect(runningContainer(pod as never)).toBeDefined();
    }, 300_000);

    it('publishing the same version again is refused, naming what each registry holds; nothing is overwritten', async () => {
      const again = await release(publishArgs(), releaseEnv());
      expect(again.code, again.stderr).toBe(3);
      expect(again.stderr).toMatch(
        new RegExp(`claimkit ${CLAIMKIT_VERSION.replace(/\./g, '\\.')} is already published`),
      );
      for (const a of report.artefacts.filter((x) => x.kind === 'image' || x.kind === 'chart')) {
        expect(again.stderr).toContain(a.refs[0]!);
        expect(await manifestDigest(a.refs[0]!, access)).toBe(a.digest);
      }
      for (const name of PACKAGES)
        expect(again.stderr).toContain(`${name}@${CLAIMKIT_VERSION} on ${npm!.url}`);
      // Refused before anything was built or pushed: the release's record is the first one.
      expect(JSON.parse(readFileSync(join(assets, `release-${CLAIMKIT_VERSION}.json`), 'utf8'))).toEqual(
        report,
      );
    }, 120_000);
  },
);
