// The consumer's side of a release: every published package packed as `pnpm publish` would pack it
// (prepack builds; publishConfig applied) and published by the release's `npm publish` to a real npm
// registry (verdaccio, @claimkit/release/npm-registry), then installed by version from that registry
// into a project outside the workspace, and the tools to use it there (commands run to completion,
// the webhook started).
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CONSUMER_TEST_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = join(CONSUMER_TEST_DIR, '..', '..');
/** The files copied into the scratch project (the operator and its tsconfigs). */
export const SCRATCH_TEMPLATE_DIR = join(CONSUMER_TEST_DIR, 'scratch');

export interface PublishedPackage {
  name: string;
  version: string;
  dir: string;
}

/** Every package under packages/ that is not private: what a release publishes to npm. */
export function publishedPackages(): PublishedPackage[] {
  const root = join(REPO_ROOT, 'packages');
  return readdirSync(root)
    .map((d) => join(root, d))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter(({ pkg }) => pkg.private !== true)
    .map(({ dir, pkg }) => ({ name: pkg.name as string, version: pkg.version as string, dir }));
}

/** The tarball name npm and pnpm give a package: `@claimkit/core@0.1.0` → `claimkit-core-0.1.0.tgz`. */
export function tarballName(p: Pick<PublishedPackage, 'name' | 'version'>): string {
  return `${p.name.replace(/^@/, '').replace('/', '-')}-${p.version}.tgz`;
}

/** `pnpm pack` in each package (its prepack builds dist/ from scratch); returns name → tarball path. */
export function packAll(packages: PublishedPackage[], dest: string): Map<string, string> {
  mkdirSync(dest, { recursive: true });
  const out = new Map<string, string>();
  for (const p of packages) {
    execFileSync('pnpm', ['pack', '--pack-destination', dest], {
      cwd: p.dir,
      stdio: 'pipe',
      timeout: 120_000,
    });
    const file = join(dest, tarballName(p));
    if (!existsSync(file)) throw new Error(`pnpm pack in ${p.dir} did not write ${file}`);
    out.set(p.name, file);
  }
  return out;
}

/** The paths in a tarball, without the leading `package/`. */
export function tarballFiles(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^package\//, ''));
}

export function tarballText(tarball: string, path: string): string {
  return execFileSync('tar', ['-xzOf', tarball, `package/${path}`], { encoding: 'utf8' });
}

export function tarballPackageJson(tarball: string): Record<string, unknown> {
  return JSON.parse(tarballText(tarball, 'package.json'));
}

/**
 * A project outside the workspace that depends on each package at the released version, with an
 * .npmrc naming the registry (as a user of a private registry has), the scratch template copied in,
 * installed with plain `npm install`: @claimkit/* and their dependencies on each other come from the
 * registry by version, like everything else.
 */
export function createScratchProject(dir: string, registry: string, packages: PublishedPackage[]): void {
  mkdirSync(dir, { recursive: true });
  writeScratchManifest(dir, registry, packages);
  for (const f of readdirSync(SCRATCH_TEMPLATE_DIR))
    copyFileSync(join(SCRATCH_TEMPLATE_DIR, f), join(dir, f));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    stdio: 'pipe',
    timeout: 300_000,
  });
}

/** package.json (every package at its exact version) and .npmrc (the registry) of a scratch project. */
export function writeScratchManifest(dir: string, registry: string, packages: PublishedPackage[]): void {
  mkdirSync(dir, { recursive: true });
  const deps = Object.fromEntries(packages.map((p) => [p.name, p.version]));
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'claimkit-consumer', private: true, type: 'module', dependencies: deps }, null, 2)}\n`,
  );
  writeFileSync(join(dir, '.npmrc'), `registry=${registry}\n`);
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  stderrLines: string[];
}

/** Runs a command to completion in `cwd` (it must exit on its own). */
export function runIn(
  cwd: string,
  cmd: string,
  args: string[],
  timeoutMs = 60_000,
  env: NodeJS.ProcessEnv = {},
): Ran {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', ...env },
  });
  if (r.error) throw r.error;
  return {
    code: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    stderrLines: r.stderr.split('\n').filter((l) => l !== ''),
  };
}

/**
 * The Deno binary of this package's `deno` devDependency (the npm package carries it per platform).
 * The binary itself, not the package's bin script: that runs it as a child and does not pass on
 * SIGTERM, so stopping the script would leave the webhook running.
 */
export function denoBinary(): string {
  const bin = join(CONSUMER_TEST_DIR, 'node_modules', 'deno', 'deno');
  if (!existsSync(bin)) throw new Error(`no Deno at ${bin}: run pnpm install (devDependency deno)`);
  return bin;
}

export function writeSelfSignedCert(dir: string): { certFile: string; keyFile: string; cert: Buffer } {
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, cert: readFileSync(certFile) };
}

export interface RunningWebhook {
  port: number;
  /** Every line the process wrote so far (stdout and stderr). */
  lines: string[];
  stop(): Promise<number | null>;
}

/** Starts a webhook and resolves once it logs "webhook listening" (with the port it bound). */
export function startWebhook(
  cwd: string,
  cmd: string,
  args: string[],
  timeoutMs = 60_000,
): Promise<RunningWebhook> {
  const child: ChildProcess = spawn(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(t);
    return code;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${cmd} ${args.join(' ')} did not listen in ${timeoutMs} ms:\n${lines.join('\n')}`));
    }, timeoutMs);
    createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      try {
        const j = JSON.parse(line) as { msg?: string; port?: number };
        if (j.msg === 'webhook listening' && typeof j.port === 'number') {
          clearTimeout(timer);
          resolve({ port: j.port, lines, stop });
        }
      } catch {}
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${lines.join('\n')}`));
    });
  });
}
