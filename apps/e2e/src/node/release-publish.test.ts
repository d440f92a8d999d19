// A release published as the release workflow publishes it, to real registries on this machine, and
// installed by version as a user installs it. `pnpm release --publish` (tools/release/src/publish.ts)
// pushes every npm package to a verdaccio registry, every component image and the chart to the OCI
// registry beside the real node (CNCF distribution, TLS with the run's CA), and writes the release's
// files with their checksums. Then `helm install oci://<registry>/claimkit/charts/claimkit
// --version <version>`: the real node's containerd *pulls* each image from that registry (its hosts
// configuration trusts the CA; no image of this path is imported), claims bind on running
// containers, and publishing the same version again is refused with nothing overwritten.
//
// Two versions: the previous release (tools/release/previous-release.json: its commit's tree,
// checked out into the cache and built there, its own images and chart) is published first, then
// this one. `helm install --version <previous>` → `helm upgrade --version <current>` (the old
// controller binary hands over to the new one; for a moment old and new replicas run together) →
// `helm rollback` → upgrade again, with claims created and migrated all along: no claim goes Lost,
// every invariant holds, doctor is clean after each step.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAIMKIT_VERSION, type Pod, type PodClaim } from '@claimkit/core';
import { type NpmRegistry, packageDocument, startNpmRegistry } from '@claimkit/release/npm-registry';
import { manifestDigest, readManifest } from '@claimkit/release/oci-registry';
import { type PreviousTree, previousReleaseTree } from '@claimkit/release/previous-release';
import type { PublishReport } from '@claimkit/release/publish';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { expectConverged } from '../chaos/helpers.ts';
import { getOrUndefined, kube, until } from '../controller/helpers.ts';
import { repoRoot } from '../harness/index.ts';
import { createTestNamespace, describeOnRealNode, e2eClients, e2eCluster } from '../harness/vitest.ts';
import { runTool } from '../helm/monitoring.ts';
import { runHelm } from '../helm/subchart.ts';
import {
  type ChurnTimeline,
  churnClaims,
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
  'releases published to real registries, installed and upgraded by version',
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
    let previous: PreviousTree = { skipped: 'not checked out yet' };
    /** Each published version's record (the previous one's, when its tree could be had, and this one's). */
    const reports = new Map<string, PublishReport>();
    let report: PublishReport;
    let ns = '';
    let valuesFile = '';
    const timeline: string[] = [];
    const publishArgs = (extra: string[] = []) => [
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
      ...extra,
    ];
    const releaseEnv = () => ({ ...process.env, CLAIMKIT_HELM: helm, NODE_AUTH_TOKEN: npm!.token });
    const previousVersion = () => ('release' in previous ? previous.release.version : undefined);

    async function publishOrThrow(what: string, extra: string[] = []): Promise<PublishReport> {
      const ran = await release(publishArgs(extra), releaseEnv());
      if (ran.code !== 0)
        throw new Error(
          `pnpm release --publish (${what}) failed (exit ${ran.code}):\n${ran.stderr.slice(-4000)}`,
        );
      const r = JSON.parse(ran.stdout) as PublishReport;
      timeline.push(`published ${what} ${r.version} in ${(ran.ms / 1000).toFixed(1)} s`);
      for (const a of r.artefacts)
        process.stderr.write(
          `[release] ${r.version} ${a.kind} ${a.kind === 'file' ? a.name : a.refs[0]} ${(a.size / 1e6).toFixed(2)} MB ${a.digest}\n`,
        );
      return r;
    }

    async function helmRun(args: string[]): Promise<string> {
      const r = await runHelm(helm, args, helmEnv);
      if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
      return r.stdout + r.stderr;
    }

    /** Every running container of the release runs `version`'s image, pulled: its digest is the registry's. */
    async function runsPulledImagesOf(version: string): Promise<void> {
      const published = reports.get(version)!;
      let wrong: string[] = [];
      await until(`every pod in ${SYSTEM} running the images of ${version}, pulled from ${oci}`, async () => {
        const pods = (await e2eClients().core.listNamespacedPod({ namespace: SYSTEM })).items.filter(
          (p) => !p.metadata?.deletionTimestamp,
        );
        wrong = [];
        for (const p of pods)
          for (const st of p.status?.containerStatuses ?? []) {
            const component = p.metadata?.labels?.['app.kubernetes.io/component'] ?? '?';
            const image = published.artefacts.find((a) => a.kind === 'image' && a.name === component);
            if (
              st.image !== `${oci}/${component}:${version}` ||
              st.imageID !== `${oci}/${component}@${image?.digest}`
            )
              wrong.push(`${p.metadata?.name}: ${st.image} ${st.imageID}`);
          }
        return pods.length >= 3 && wrong.length === 0;
      }).catch((e: Error) => {
        throw new Error(`${e.message}: ${wrong.join('; ')}`);
      });
    }

    async function controllerPods(): Promise<Pod[]> {
      const pods = await kube().list('Pod', {
        namespace: SYSTEM,
        labelSelector: 'app.kubernetes.io/component=controller',
      });
      return (pods.items as Pod[]).filter((p) => !p.metadata.deletionTimestamp);
    }

    /** The controller pod holding the Lease runs `version`. */
    async function leaderRuns(version: string): Promise<void> {
      let seen = '';
      await until(`the Lease held by a controller pod of ${version}`, async () => {
        const lease = await e2eClients().coordination.readNamespacedLease({
          namespace: SYSTEM,
          name: 'claimkit-controller',
        });
        const holder = (await controllerPods()).find((p) =>
          lease.spec?.holderIdentity?.startsWith(p.metadata.name),
        );
        seen = `${lease.spec?.holderIdentity} ${holder?.spec?.containers[0]?.image ?? 'no such pod'}`;
        return holder?.spec?.containers[0]?.image === `${oci}/controller:${version}`;
      }).catch((e: Error) => {
        throw new Error(`${e.message}; last holder: ${seen}`);
      });
    }

    /**
     * A helm step with claims created and migrated all along: the versions of the controller pods
     * Ready at once are sampled (old and new together for a moment), then the claims converge
     * (all Bound, every invariant, doctor clean) and none was ever Lost.
     */
    async function rollWithChurn(
      step: string,
      act: () => Promise<unknown>,
      to: string,
    ): Promise<ChurnTimeline> {
      const churn = churnClaims({ ns, poolName: 'real', prefix: step.replace(/[^a-z0-9]+/g, '-') });
      const together = new Set<string>();
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const ready = (await controllerPods()).filter((p) =>
            p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          );
          const versions = [
            ...new Set(ready.map((p) => p.spec?.containers[0]?.image?.split(':').pop() ?? '?')),
          ].sort();
          if (versions.length > 1) together.add(versions.join('+'));
          await new Promise((r) => setTimeout(r, 250));
        }
      })();
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, 3_000));
      await act();
      await deploymentsReady(step);
      await runsPulledImagesOf(to);
      await leaderRuns(to);
      await new Promise((r) => setTimeout(r, 3_000));
      const t = await churn.stop();
      sampling = false;
      await sampler;
      await expectConverged(ns, step, t0, 120_000);
      await bothClaimctlsAgree(step);
      timeline.push(
        `${step} (to ${to}): ${((Date.now() - t0) / 1000).toFixed(1)} s; claims created ${t.created} (${t.refused} creates refused), bound ${t.bound}, migrations asked ${t.migrationsAsked}, migrated ${t.migrated}, max bind ${(t.maxBindMs / 1000).toFixed(1)} s, lost ${t.lost.length}; controller versions Ready together: ${[...together].join(', ') || 'never'}`,
      );
      process.stderr.write(`[release] ${timeline.at(-1)}\n`);
      expect(t.lost, `${step}: claims Lost`).toEqual([]);
      expect(t.waiting, `${step}: claims never Bound`).toEqual([]);
      await releaseClaims(step, t.names);
      return t;
    }

    /**
     * A step's claims deleted, as an application releases its pods: they go (the controller removes
     * its finalizer) and their pods are recycled (releasePolicy Recycle: Idle, no claimed-by label).
     */
    async function releaseClaims(step: string, names: string[]): Promise<void> {
      const c = kube();
      const claims = (await c.list('PodClaim', { namespace: ns })).items as PodClaim[];
      const pods = claims
        .filter((cl) => names.includes(cl.metadata.name))
        .map((cl) => cl.status?.podName ?? '');
      for (const name of names) await getOrUndefined(c.delete('PodClaim', { namespace: ns, name }));
      let held: string[] = [];
      await until(
        `${step}: its ${names.length} claims gone and their pods recycled to Idle`,
        async () => {
          const left = (await c.list('PodClaim', { namespace: ns })).items.filter((cl) =>
            names.includes(cl.metadata.name),
          );
          const now = (await c.list('Pod', { namespace: ns })).items as Pod[];
          held = now
            .filter((p) => pods.includes(p.metadata.name) && !p.metadata.deletionTimestamp)
            .filter(
              (p) =>
                p.metadata.labels?.['claimkit.dev/state'] !== 'Idle' ||
                p.metadata.labels?.['claimkit.dev/claimed-by'] !== undefined,
            )
            .map((p) => `${p.metadata.name} ${JSON.stringify(p.metadata.labels)}`);
          return left.length === 0 && held.length === 0;
        },
        120_000,
      ).catch(async (e: Error) => {
        throw new Error(`${e.message}; pods still held: ${held.join(' | ')}\n${await controllerLogs()}`);
      });
    }

    /** The last lines of every controller pod's log (for a failure's message). */
    async function controllerLogs(): Promise<string> {
      const out: string[] = [];
      for (const p of await controllerPods()) {
        const log = await e2eClients()
          .core.readNamespacedPodLog({ namespace: SYSTEM, name: p.metadata.name, tailLines: 40 })
          .catch((e: Error) => e.message);
        out.push(`--- ${p.metadata.name} (${p.spec?.containers[0]?.image}):\n${log}`);
      }
      return out.join('\n');
    }

    /**
     * The CLI across versions: claimctl of this release and of the previous one (its tree's sources)
     * each print their own version, find nothing with doctor and read every claim Bound to a pod,
     * whichever version the cluster runs.
     */
    async function bothClaimctlsAgree(step: string): Promise<void> {
      const clis: [string, string][] = [[CLAIMKIT_VERSION, join(repoRoot, 'packages/cli/src/main.ts')]];
      if ('dir' in previous)
        clis.push([previous.release.version, join(previous.dir, 'packages/cli/src/main.ts')]);
      const kubeconfig = e2eCluster().kubeconfigPath;
      for (const [version, main] of clis) {
        const claimctl = (...args: string[]) =>
          runTool(process.execPath, [
            '--conditions=@claimkit/source',
            main,
            ...args,
            '--kubeconfig',
            kubeconfig,
          ]);
        const v = await claimctl('--version');
        expect(v.stdout, `claimctl ${version} --version`).toContain(version);
        const doctor = await claimctl('doctor', '-n', ns, '-o', 'json');
        expect(doctor.code, `${step}: claimctl ${version} doctor: ${doctor.stdout}${doctor.stderr}`).toBe(0);
        const got = await claimctl('get', 'podclaims', '-n', ns, '-o', 'json');
        expect(got.code, `${step}: claimctl ${version} get: ${got.stderr}`).toBe(0);
        const items = (JSON.parse(got.stdout) as { items: PodClaim[] }).items;
        expect(items.length, `${step}: claimctl ${version} get podclaims`).toBeGreaterThan(0);
        const notBound = items.filter((cl) => cl.status?.phase !== 'Bound' || !cl.status?.podName);
        expect(
          notBound.map((cl) => cl.metadata.name),
          `${step}: claimctl ${version} reads every claim Bound to a pod`,
        ).toEqual([]);
      }
    }

    beforeAll(async () => {
      npm = await startNpmRegistry({ dir: join(scratch, 'npm-registry') });
      previous = previousReleaseTree(repoRoot);
      if ('skipped' in previous)
        process.stderr.write(
          `[release] the upgrade from the previous release is skipped: ${previous.skipped}\n`,
        );
      else
        reports.set(
          previous.release.version,
          await publishOrThrow('the previous release', [
            '--root',
            previous.dir,
            '--revision',
            previous.release.commit,
          ]),
        );
      report = await publishOrThrow('this release');
      reports.set(report.version, report);
    }, 1_800_000);

    afterAll(async () => {
      process.stderr.write(`[release] timeline:\n${timeline.map((l) => `  ${l}`).join('\n')}\n`);
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
        const doc = (await packageDocument(npm!.url, p.name))!;
        expect(Object.keys(doc.versions).sort()).toEqual([...reports.keys()].sort());
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
      const check = await runTool('sha256sum', ['-c', 'SHA256SUMS'], undefined, assets);
      expect(check.code, check.stdout + check.stderr).toBe(0);
      expect(check.stdout.trim().split('\n')).toHaveLength(files.length);
      const deploy = (
        await runTool('tar', ['-tzf', join(assets, `claimkit-deploy-${CLAIMKIT_VERSION}.tar.gz`)])
      ).stdout;
      expect(deploy).toContain(`claimkit-deploy-${CLAIMKIT_VERSION}/crds/`);
      expect(deploy).toContain(`claimkit-deploy-${CLAIMKIT_VERSION}/helm/claimkit/Chart.yaml`);
    });

    it('the previous release is its own build: other digests, its version in the registries', async () => {
      const prev = previousVersion();
      if (!prev)
        return void process.stderr.write(
          `[release] no previous release: ${'skipped' in previous ? previous.skipped : ''}\n`,
        );
      expect(prev).not.toBe(CLAIMKIT_VERSION);
      const old = reports.get(prev)!;
      expect(old.version).toBe(prev);
      expect(old.revision).toBe('release' in previous ? previous.release.commit : '');
      for (const image of old.artefacts.filter((a) => a.kind === 'image')) {
        expect(await manifestDigest(`${oci}/${image.name}:${prev}`, access)).toBe(image.digest);
        const current = report.artefacts.find((a) => a.kind === 'image' && a.name === image.name)!;
        expect(image.digest, image.name).not.toBe(current.digest);
      }
      expect(await manifestDigest(`${oci}/charts/claimkit:${prev}`, access)).toBeDefined();
    });

    it('helm install oci://…/claimkit --version (the previous release when there is one): the node pulls every image; claims bind on running containers', async () => {
      const first = previousVersion() ?? CLAIMKIT_VERSION;
      const values = await prepareReleaseNamespace(scratch);
      const withImage = (component: string, v: unknown) => ({
        ...(v as object),
        image: { repository: `${oci}/${component}` },
      });
      valuesFile = join(scratch, 'values.yaml');
      writeFileSync(
        valuesFile,
        JSON.stringify({
          ...values,
          controller: withImage('controller', values.controller),
          webhook: withImage('webhook', values.webhook),
        }),
      );
      const t0 = Date.now();
      const out = await helmRun([
        'install',
        RELEASE,
        `oci://${oci}/charts/claimkit`,
        '--version',
        first,
        '--ca-file',
        node.registry.caFile,
        '-n',
        SYSTEM,
        '-f',
        valuesFile,
      ]);
      expect(out).toMatch(new RegExp(`Pulled: ${oci}/charts/claimkit:${first}`));
      await deploymentsReady('helm install from the OCI registry');
      await runsPulledImagesOf(first);
      timeline.push(
        `helm install --version ${first}: rolled out in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
      ns = await createTestNamespace('release');
      await webhookReachable(ns);
      const c = kube();
      await c.create(realPool(ns, 'real', { minIdle: 2, maxPods: 40 }));
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
      await expectConverged(ns, `helm install --version ${first}`, t0);
    }, 300_000);

    const upgradeSteps = () => previousVersion() !== undefined;
    const upgradeToCurrent = () =>
      helmRun([
        'upgrade',
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
      ]);
    it('helm upgrade --version <current> while claims bind and migrate: the old controller binary hands over to the new one, no claim Lost, doctor clean', async (ctx) => {
      if (!upgradeSteps()) return ctx.skip();
      await rollWithChurn('helm upgrade', upgradeToCurrent, CLAIMKIT_VERSION);
    }, 600_000);

    it('helm rollback: the previous binary takes over again, no claim Lost, doctor clean', async (ctx) => {
      if (!upgradeSteps()) return ctx.skip();
      await rollWithChurn(
        'helm rollback',
        () => helmRun(['rollback', RELEASE, '1', '-n', SYSTEM, '--wait', '--timeout', '180s']),
        previousVersion()!,
      );
    }, 600_000);

    it('helm upgrade again after the rollback: no claim Lost, doctor clean', async (ctx) => {
      if (!upgradeSteps()) return ctx.skip();
      await rollWithChurn('helm upgrade again', upgradeToCurrent, CLAIMKIT_VERSION);
    }, 600_000);

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
