import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { controlPlaneDir, repoRoot } from './paths.ts';

export const BINARIES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;
export type Binary = (typeof BINARIES)[number];
/** The real node's components (local-node.ts), in start order. */
export const NODE_BINARIES = ['registry', 'containerd', 'kubelet', 'kube-proxy'] as const;

/** The pinned versions in apps/e2e/controlplane/versions.env. */
export function controlPlaneVersions(): { kubernetes: string; kwok: string; etcd: string } {
  const env = Object.fromEntries(
    readFileSync(join(controlPlaneDir, 'versions.env'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#') && l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return { kubernetes: env.K8S_VERSION ?? '', kwok: env.KWOK_VERSION ?? '', etcd: env.ETCD_VERSION ?? '' };
}

/**
 * Runs apps/e2e/controlplane/build.sh, which reuses cached binaries or builds the missing ones
 * (minutes, the first time), and returns the directory holding them. Build output goes to stderr.
 */
export function ensureBinaries(): Promise<string> {
  return runBuildScript('build.sh');
}

/** `build.sh node`: the real node's kubelet, kube-proxy, containerd, shim and ctr (and Debian's runc, CNI plugins). */
export function ensureNodeBinaries(): Promise<string> {
  return runBuildScript('build.sh', ['node']);
}

/**
 * `build-criu.sh`: the directory holding the `criu` the real node's runtime checkpoints with
 * (Debian 13's CRIU in a minimal rootfs of its own; cached).
 */
export function ensureCriu(): Promise<string> {
  return runBuildScript('build-criu.sh');
}

/** Runs apps/e2e/controlplane/build-helm.sh (cached, or built from the Go module proxy): helm's path. */
export function ensureHelm(): Promise<string> {
  return runBuildScript('build-helm.sh');
}

/**
 * Runs apps/e2e/controlplane/build-promtool.sh (cached, or built from the Go module proxy): promtool's
 * path, for the monitoring checks (rules of the chart, a live /metrics).
 */
export function ensurePromtool(): Promise<string> {
  return runBuildScript('build-promtool.sh');
}

/**
 * The previous release's tree (tools/release/previous-release.json, checked out into the cache by its
 * commit) and its component images, made while the cluster starts so that the release e2e only
 * publishes them. Resolves with the line it printed; never rejects (the release e2e builds what is
 * missing itself and names any failure).
 */
export function ensurePreviousRelease(): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@claimkit/source',
        join(repoRoot, 'tools/release/src/previous-release.ts'),
        '--build-images',
        repoRoot,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: process.env },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.once('error', (e) => resolve(`[previous-release] could not start: ${e.message}`));
    child.once('close', (code) => resolve(`${out.trim()}${code === 0 ? '' : ` (exit ${code})`}`));
  });
}

/** Runs a script of apps/e2e/controlplane that prints its result as the last line of stdout. */
function runBuildScript(script: string, args: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(controlPlaneDir, script), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: process.env,
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.once('error', reject);
    // 'close', not 'exit': stdout may still hold the result when the process has exited.
    child.once('close', (code) => {
      const result = out.trim().split('\n').pop() ?? '';
      if (code === 0 && result) resolve(result);
      else
        reject(
          new Error(
            `apps/e2e/controlplane/${[script, ...args].join(' ')} failed (exit ${code}); see its output above`,
          ),
        );
    });
  });
}
