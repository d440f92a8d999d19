// The kind provider (needs Docker, so it runs in CI, not on our machines): creates a kind cluster,
// builds each component's image, loads it with `kind load docker-image`, applies deploy/.
//
// Contract with the rest of the repository:
// - a component is a directory packages/<c> with a Dockerfile (built from the repository root);
//   its image is tagged claimkit/<c>:e2e;
// - its manifests live in deploy/<c>/ (`kubectl apply -k` when there is a kustomization.yaml, else
//   `apply -R -f`); its Deployments are labelled app.kubernetes.io/name=claimkit and
//   app.kubernetes.io/component=<c> in namespace claimkit-system; the harness points their
//   containers at the loaded image and waits for the rollout;
// - manifests that use cert-manager resources get cert-manager installed first (pinned version).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTokenIdentity } from './identity.ts';
import { installCrds, makeClients } from './kube.ts';
import { crdDir, repoRoot, runsDir } from './paths.ts';
import type { ClusterHandle } from './types.ts';
import { waitFor } from './wait.ts';

const execFileP = promisify(execFile);
const NAMESPACE = 'claimkit-system';
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
    for (const c of kindComponents()) {
      const image = `claimkit/${c}:e2e`;
      await run('docker', ['build', '-t', image, '-f', join('packages', c, 'Dockerfile'), '.'], log);
      await run('kind', ['load', 'docker-image', image, '--name', name], log);
    }
    for (const c of components) {
      const manifests = join(repoRoot, 'deploy', c);
      const apply = existsSync(join(manifests, 'kustomization.yaml'))
        ? ['-k', manifests]
        : ['-R', '-f', manifests];
      // cert-manager's own webhook may need a few more seconds after its Deployments are Available.
      await waitFor(`kubectl apply ${manifests}`, () => kubectl('apply', ...apply).then(() => true), {
        timeoutMs: 120_000,
        intervalMs: 5_000,
      });
      const selector = `app.kubernetes.io/name=claimkit,app.kubernetes.io/component=${c}`;
      const deployments = (
        await kubectl('-n', NAMESPACE, 'get', 'deployment', '-l', selector, '-o', 'name')
      ).trim();
      if (!deployments) continue;
      await kubectl('-n', NAMESPACE, 'set', 'image', 'deployment', '-l', selector, `*=claimkit/${c}:e2e`);
      await kubectl('-n', NAMESPACE, 'rollout', 'status', 'deployment', '-l', selector, '--timeout=300s');
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
