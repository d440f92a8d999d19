// The previous release, for the upgrade e2e: the commit pinned in tools/release/previous-release.json
// (its version and why), checked out from this repository's history into the cache (keyed by the
// commit) as a git work tree of its own with its dependencies installed, so that its packages,
// images and chart are built from that tree exactly as they were, and `pnpm release --publish --root
// <tree> --revision <commit>` publishes them. A clone that lacks the commit (a shallow CI checkout)
// says so and what to do; it does not build anything else in its place.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

function sh(cmd: string, args: string[], cwd: string, input?: Buffer): Buffer {
  const r = spawnSync(cmd, args, { cwd, input, maxBuffer: 1 << 30, env: process.env });
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
  const lock = join(base, '.lock');
  const deadline = Date.now() + 900_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(ready)) return { dir, release };
      if (Date.now() > deadline) throw new Error(`${lock} held for 15 min`);
      execFileSync('sleep', ['2']);
    }
  }
  try {
    if (existsSync(ready)) return { dir, release };
    const tmp = join(base, `tree.${process.pid}`);
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp);
    sh('tar', ['-x'], tmp, sh('git', ['-C', root, 'archive', '--format=tar', release.commit], root));
    sh('git', ['init', '-q'], tmp);
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
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
