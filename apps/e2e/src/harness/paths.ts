import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository root (apps/e2e/src/harness -> ../../../..). */
export const repoRoot = resolve(import.meta.dirname, '../../../..');
export const controlPlaneDir = join(repoRoot, 'apps/e2e/controlplane');
export const kwokStagesDir = join(controlPlaneDir, 'kwok-stages');
/** Manifests every provider installs before the suites run (override: CLAIMKIT_E2E_CRD_DIR). */
export const crdDir = process.env.CLAIMKIT_E2E_CRD_DIR || join(repoRoot, 'deploy/crds');

/** Same rule as scripts/toolchain.sh: everything heavy is cached outside the repository. */
export function cacheDir(): string {
  return (
    process.env.CLAIMKIT_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'claimkit')
  );
}

/**
 * Where runs keep their state (certificates, kubeconfigs, logs, etcd data, pid file). Inside the
 * checkout (gitignored `.claimkit/`) so `pnpm cluster down` and the next start find leftovers.
 */
export function runsDir(): string {
  return process.env.CLAIMKIT_E2E_RUNS_DIR ?? join(repoRoot, '.claimkit/runs');
}
