// The kind provider (needs Docker, so it runs in CI, not on our machines): creates a kind cluster,
// then takes the same path as the local real node (deploy-components.ts): our images built by
// apps/e2e/images/build-images.sh (buildah, OCI archives tagged ghcr.io/claimkit/<c>:<version> as
// deploy/ names them), loaded with `kind load image-archive`, each component's deploy/<c>/ applied
// and its Deployments waited for. The only steps the local provider does not run are
// `kind create cluster` and `kind load`.
//
// Contract with the rest of the repository:
// - a component is a directory packages/<c> with a Dockerfile (built from the repository root);
// - its manifests live in deploy/<c>/ (applied as `kubectl apply -k` would); its Deployments live
//   in namespace claimkit-system;
// - manifests that use cert-manager resources get cert-manager installed first (pinned version).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deployComponent } from './deploy-components.ts';
import { createTokenIdentity } from './identity.ts';
import { buildImages } from './images.ts';
import { installCrds, makeClients } from './kube.ts';
import { crdDir, repoRoot, runsDir } from './paths.ts';
import type { ClusterHandle } from './types.ts';
import { waitFor } from './wait.ts';

const execFileP = promisify(execFile);
const CERT_MANAGER_URL =
  process.env.CLAIMKIT_KIND_CERT_MANAGER_URL ??
  'https://github.com/cert-manager/cert-manager/releases/download/v1.16.2/cert-manager.yaml';

function usesCertManager(dir: string): boolean {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.ya?ml$/.test(f))
    .some((f) => readFileSync(join(dir, f), 'utf8').includes('cert-manager.io/'));
}

async function run(cmd: string, args: string[], log: (m: string) => void): Promise<string> {
  log(`$ ${cmd} ${args.join(' ')}`);
  try {
    const { stdout } = await execFileP(cmd, args, { cwd: repoRoot, maxBuffer: 64 << 20 });
    return stdout;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') throw new Error(`the kind provider needs \`${cmd}\` on PATH`);
    throw new Error(`${cmd} ${args.join(' ')} failed:\n${err.stderr ?? err.message}`);
  }
}

export function kindComponents(): string[] {
  const dir = join(repoRoot, 'packages');
  return readdirSync(dir)
    .filter((c) => existsSync(join(dir, c, 'Dockerfile')))
    .sort();
}

export async function startKindCluster(
  opts: { log?: (m: string) => void; crdDir?: string | false } = {},
): Promise<ClusterHandle> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`[e2e:kind] ${m}\n`));
  const name = process.env.CLAIMKIT_KIND_CLUSTER ?? 'claimkit-e2e';
  const keep = process.env.CLAIMKIT_KIND_KEEP === '1';
  mkdirSync(runsDir(), { recursive: true });
  const stateDir = mkdtempSync(join(runsDir(), 'kind-'));
  const kubeconfigPath = join(stateDir, 'admin.kubeconfig');

  const existing = (await run('kind', ['get', 'clusters'], log)).split('\n').includes(name);
  if (existing) {
    await run('kind', ['export', 'kubeconfig', '--name', name, '--kubeconfig', kubeconfigPath], log);
  } else {
    // kind's own default node image unless told otherwise (kindest/node images follow kind
    // releases, not every Kubernetes patch).
    const image = process.env.CLAIMKIT_KIND_NODE_IMAGE;
    await run(
      'kind',
      ['create', 'cluster', '--name', name, ...(image ? ['--image', image] : [])].concat([
        '--kubeconfig',
        kubeconfigPath,
        '--wait',
        '180s',
      ]),
      log,
    );
  }
  const deleteCluster = async () => {
    if (!existing && !keep) await run('kind', ['delete', 'cluster', '--name', name], log);
  };

  try {
    const admin = makeClients(kubeconfigPath);
    const dir = opts.crdDir === false ? undefined : (opts.crdDir ?? crdDir);
    if (dir) await installCrds(admin, dir);

    const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', kubeconfigPath, ...args], log);
    const components = kindComponents().filter((c) => existsSync(join(repoRoot, 'deploy', c)));
    if (components.some((c) => usesCertManager(join(repoRoot, 'deploy', c)))) {
      await kubectl('apply', '-f', CERT_MANAGER_URL);
      await kubectl(
        '-n',
        'cert-manager',
        'wait',
        '--for=condition=Available',
        'deployment',
        '--all',
        '--timeout=300s',
      );
    }
    const built = await buildImages();
    if (!built.ok) throw new Error(`the kind provider needs our images: ${built.reason}`);
    for (const image of built.images.filter((i) => components.includes(i.name))) {
      await run('kind', ['load', 'image-archive', image.archive, '--name', name], log);
    }
    for (const c of components) {
      // cert-manager's own webhook may need a few more seconds after its Deployments are Available.
      await waitFor(
        `deploy/${c} applied and rolled out`,
        () => deployComponent(admin, c, { log }).then(() => true),
        { timeoutMs: 420_000, intervalMs: 5_000 },
      );
    }

    const identity = await createTokenIdentity(admin, join(stateDir, 'user.kubeconfig'));
    return {
      provider: 'kind',
      kubeconfigPath,
      userKubeconfigPath: identity.kubeconfigPath,
      userName: identity.userName,
      server: admin.kc.getCurrentCluster()?.server ?? '',
      stop: async () => {
        await identity.remove().catch(() => {});
        await deleteCluster();
        rmSync(stateDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await deleteCluster().catch(() => {});
    throw e;
  }
}
