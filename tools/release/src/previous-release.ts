// The previous release, for the upgrade e2e: the commit pinned in tools/release/previous-release.json
// (its version and why), checked out from this repository's history into the cache (keyed by the
// commit) as a git work tree of its own with its dependencies installed, so that its packages,
// images and chart are built from that tree exactly as they were, and `pnpm release --publish --root
// <tree> --revision <commit>` publishes them. A clone that lacks the commit (a shallow CI checkout)
// says so and what to do; it does not build anything else in its place.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { underDirLock } from './dir-lock.ts';
import { claimkitCacheDir } from './npm-registry.ts';

export interface PreviousRelease {
  version: string;
  commit: string;
  note: string;
}

export function previousRelease(root: string): PreviousRelease {
  const file = join(root, 'tools/release/previous-release.json');
  const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<PreviousRelease>;
  if (!r.version || !/^\d+\.\d+\.\d+/.test(r.version) || !r.commit || !/^[0-9a-f]{40}$/.test(r.commit))
    throw new Error(`${file}: want {"version": "<semver>", "commit": "<40 hex>", "note": "…"}`);
  return { version: r.version, commit: r.commit, note: r.note ?? '' };
}

export type PreviousTree = { dir: string; release: PreviousRelease } | { skipped: string };

function sh(
  cmd: string,
  args: string[],
  cwd: string,
  input?: Buffer,
  env: NodeJS.ProcessEnv = process.env,
): Buffer {
  const r = spawnSync(cmd, args, { cwd, input, maxBuffer: 1 << 30, env });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} (in ${cwd}) failed (exit ${r.status}):\n${String(r.stderr).slice(-3000)}`,
    );
  return r.stdout;
}

/**
 * The previous release's tree, checked out and installed once per commit under
 * <cache>/releases/<commit>/tree. Its build-images.sh hashes git's files, so the tree is a git
 * repository of its own (one commit holding the release's files).
 */
export function previousReleaseTree(root: string, cache = claimkitCacheDir()): PreviousTree {
  const release = previousRelease(root);
  const base = join(cache, 'releases', release.commit);
  const dir = join(base, 'tree');
  const ready = join(base, '.ready');
  if (existsSync(ready)) return { dir, release };
  try {
    execFileSync('git', ['-C', root, 'cat-file', '-e', `${release.commit}^{commit}`], { stdio: 'ignore' });
  } catch {
    return {
      skipped: `the previous release's commit ${release.commit} (claimkit ${release.version}) is not in this clone (a shallow clone?): git fetch --unshallow, or clone with full history, to test the upgrade from ${release.version}`,
    };
  }
  mkdirSync(base, { recursive: true });
  return underDirLock(
    join(base, '.lock'),
    () => (existsSync(ready) ? { dir, release } : undefined),
    () => {
      const tmp = join(base, `tree.${process.pid}`);
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp);
      sh('tar', ['-x'], tmp, sh('git', ['-C', root, 'archive', '--format=tar', release.commit], root));
      sh('git', ['init', '-q'], tmp);
      // The release's commit time on this tree's one commit: archives made from it are the same bytes.
      const when = sh('git', ['-C', root, 'show', '-s', '--format=%cI', release.commit], root)
        .toString()
        .trim();
      const dated = { ...process.env, GIT_AUTHOR_DATE: when, GIT_COMMITTER_DATE: when };
      sh('git', ['add', '-A'], tmp);
      sh(
        'git',
        [
          '-c',
          'user.name=claimkit',
          '-c',
          'user.email=release@claimkit.invalid',
          'commit',
          '-q',
          '--no-verify',
          '-m',
          `claimkit ${release.version} (${release.commit})`,
        ],
        tmp,
        undefined,
        dated,
      );
      // Its own lockfile; the store is shared, so this is mostly links (offline first).
      const offline = spawnSync('pnpm', ['install', '--frozen-lockfile', '--offline'], {
        cwd: tmp,
        env: process.env,
      });
      if (offline.status !== 0) sh('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], tmp);
      rmSync(dir, { recursive: true, force: true });
      renameSync(tmp, dir);
      writeFileSync(ready, `${new Date().toISOString()}\n`);
      return { dir, release };
    },
  );
}

/**
 * `node previous-release.ts --build-images ROOT`: the previous release's tree and its component
 * images, made ahead of the release e2e (the e2e's global setup runs this beside the cluster's
 * start, so a cold run builds them while the control plane compiles). Prints one line saying what it
 * did; a clone without the commit prints why and exits 0 (the e2e says so again and skips).
 */
async function main(argv: string[]): Promise<number> {
  if (argv[0] !== '--build-images' || !argv[1]) {
    console.error('usage: previous-release.ts --build-images ROOT');
    return 2;
  }
  const t0 = Date.now();
  const tree = previousReleaseTree(argv[1]);
  if ('skipped' in tree) {
    console.log(`[previous-release] ${tree.skipped}`);
    return 0;
  }
  const script = join(tree.dir, 'apps/e2e/images/build-images.sh');
  const r = spawnSync('bash', [script, 'cli', 'controller', 'webhook'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) {
    console.error(`[previous-release] ${script} failed (exit ${r.status}):\n${r.stderr.slice(-3000)}`);
    return 1;
  }
  console.log(
    `[previous-release] claimkit ${tree.release.version} (${tree.release.commit.slice(0, 12)}): tree and images ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  return 0;
}

if (process.argv[1]?.endsWith('previous-release.ts')) {
  process.exitCode = await main(process.argv.slice(2));
}
