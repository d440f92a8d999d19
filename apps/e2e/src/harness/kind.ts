// The kind provider (needs Docker, so it runs in CI, not on our machines): creates a kind cluster,
// builds each component's image, loads it with `kind load docker-image`, applies deploy/.
//
// Contract with the rest of the repository:
// - a component is a directory packages/<c> with a Dockerfile (built from the repository root);
//   its image is tagged claimkit/<c>:e2e;
// - its manifests live in deploy/<c>/ (applied with `kubectl apply -R -f`), in namespace
//   claimkit-system, and its Deployment is labelled app.kubernetes.io/name=claimkit-<c>; the
//   harness points that Deployment's containers at the loaded image and waits for the rollout.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTokenIdentity } from './identity.ts';
import { installCrds, makeClients } from './kube.ts';
import { crdDir, repoRoot, runsDir } from './paths.ts';
import type { ClusterHandle } from './types.ts';

const execFileP = promisify(execFile);
const NAMESPACE = 'claimkit-system';

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
    for (const c of kindComponents()) {
      const image = `claimkit/${c}:e2e`;
      await run('docker', ['build', '-t', image, '-f', join('packages', c, 'Dockerfile'), '.'], log);
      await run('kind', ['load', 'docker-image', image, '--name', name], log);
      const manifests = join(repoRoot, 'deploy', c);
      if (!existsSync(manifests)) continue;
      await kubectl('apply', '-R', '-f', manifests);
      const selector = `app.kubernetes.io/name=claimkit-${c}`;
      await kubectl('-n', NAMESPACE, 'set', 'image', 'deployment', '-l', selector, `*=${image}`);
      await kubectl('-n', NAMESPACE, 'rollout', 'status', 'deployment', '-l', selector, '--timeout=180s');
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
