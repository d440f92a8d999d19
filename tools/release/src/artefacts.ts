// What a dry run can compute without publishing: each npm package packed as `pnpm publish` packs it
// (workspace:* replaced by the version) with the integrity and shasum npm will show, and the chart
// packaged by helm with its digest. Images are only described: they are built by the workflow.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface Digests {
  /** npm's `integrity`: sha512-<base64>. */
  integrity: string;
  /** npm's `shasum`: the sha1 of the tarball, hex. */
  shasum: string;
  sha256: string;
  size: number;
}

export function digestsOf(bytes: Buffer): Digests {
  return {
    integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
    shasum: createHash('sha1').update(bytes).digest('hex'),
    sha256: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
    size: bytes.length,
  };
}

export interface PackedPackage extends Digests {
  name: string;
  version: string;
  file: string;
  files: number;
}

/** `pnpm pack` of the package in `dir` into `dest` (pnpm's pack is reproducible: fixed mtimes). */
export function packPackage(root: string, dir: string, dest: string): PackedPackage {
  const out = execFileSync('pnpm', ['pack', '--pack-destination', dest, '--json'], {
    cwd: join(root, dir),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const r = JSON.parse(out.slice(out.indexOf('{'))) as {
    name: string;
    version: string;
    filename: string;
    files: unknown[];
  };
  return {
    name: r.name,
    version: r.version,
    file: r.filename,
    files: r.files.length,
    ...digestsOf(readFileSync(r.filename)),
  };
}

/** The helm to package the chart with: CLAIMKIT_HELM, the e2e harness's build, or helm on PATH. */
export function findHelm(): string | undefined {
  const candidates = [
    process.env.CLAIMKIT_HELM,
    join(
      process.env.CLAIMKIT_CACHE_DIR ??
        join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'claimkit'),
      'helm/v3.22.0/helm',
    ),
  ];
  for (const c of candidates) if (c && existsSync(c)) return c;
  try {
    execFileSync('helm', ['version', '--short'], { stdio: 'ignore' });
    return 'helm';
  } catch {
    return undefined;
  }
}

export interface PackagedChart extends Digests {
  file: string;
}

/** `helm package` of the chart directory into `dest`. */
export function packageChart(helm: string, root: string, dir: string, dest: string): PackagedChart {
  execFileSync(helm, ['package', join(root, dir), '--destination', dest], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const file = readdirSync(dest).find((f) => f.endsWith('.tgz'));
  if (!file) throw new Error(`helm package ${dir} wrote no .tgz`);
  return { file: join(dest, file), ...digestsOf(readFileSync(join(dest, file))) };
}
