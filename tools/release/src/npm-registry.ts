// A real npm registry on this machine: verdaccio, installed from the npm registry at a pinned version
// into the cache (keyed by that version) and started on 127.0.0.1 with a storage of its own. It
// serves @claimkit/* only from what was published to it (no uplink for the scope, so a version that
// was not published here is a 404, as on a fresh public registry) and proxies every other package to
// the machine's npm registry, as a company's private registry does; publishing needs a user, whose
// token startNpmRegistry returns. The release e2e publishes to it and the consumer test installs
// from it by version.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { underDirLock } from './dir-lock.ts';

/** verdaccio 6.10.4 wants Node 22 (the library's note for this machine kind); 6.8.0 runs on ours. */
export const VERDACCIO_VERSION = '6.8.0';

export interface NpmRegistry {
  /** http://127.0.0.1:<port>/ */
  url: string;
  /** The publishing user's token. */
  token: string;
  /** An npm userconfig naming this registry and the token: `npm publish --userconfig <it>`. */
  npmrc: string;
  logPath: string;
  stop(): Promise<void>;
}

export function claimkitCacheDir(): string {
  return (
    process.env.CLAIMKIT_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'claimkit')
  );
}

/** verdaccio's entry script, installed once per version under <cache>/verdaccio/<version>. */
export function installVerdaccio(cache = claimkitCacheDir()): string {
  const dir = join(cache, 'verdaccio', VERDACCIO_VERSION);
  const entry = join(dir, 'node_modules/verdaccio/bin/verdaccio');
  const done = join(dir, '.installed');
  mkdirSync(dir, { recursive: true });
  // Parallel test files install at most once.
  return underDirLock(
    join(dir, '.lock'),
    () => (existsSync(done) ? entry : undefined),
    () => {
      try {
        writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
        execFileSync(
          'npm',
          [
            'install',
            '--no-audit',
            '--no-fund',
            '--loglevel=error',
            '--omit=dev',
            `verdaccio@${VERDACCIO_VERSION}`,
          ],
          { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 },
        );
      } catch (e) {
        const err = e as { stderr?: Buffer; message: string };
        throw new Error(
          `installing verdaccio@${VERDACCIO_VERSION} into ${dir} failed: ${err.stderr ?? err.message}`,
        );
      }
      if (!existsSync(entry)) throw new Error(`npm install verdaccio@${VERDACCIO_VERSION} left no ${entry}`);
      writeFileSync(done, `${new Date().toISOString()}\n`);
      return entry;
    },
    300_000,
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** The machine's npm registry (where verdaccio proxies every package but @claimkit/*). */
export function upstreamRegistry(): string {
  try {
    const r = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
    if (/^https?:\/\//.test(r)) return r;
  } catch {
    // npm's default below
  }
  return 'https://registry.npmjs.org/';
}

/** verdaccio's configuration (JSON is YAML). */
export function verdaccioConfig(o: { storage: string; htpasswd: string; upstream: string }): string {
  return `${JSON.stringify(
    {
      storage: o.storage,
      auth: { htpasswd: { file: o.htpasswd, max_users: 1 } },
      uplinks: { upstream: { url: o.upstream, timeout: '60s', max_fails: 5 } },
      packages: {
        // No proxy: only what was published here. A version is never published twice (verdaccio
        // answers 409, as npmjs does) and never unpublished.
        '@claimkit/*': { access: '$all', publish: '$authenticated', unpublish: false },
        '**': { access: '$all', publish: '$authenticated', proxy: 'upstream' },
      },
      server: { keepAliveTimeout: 60 },
      log: { type: 'stdout', format: 'json', level: 'warn' },
    },
    null,
    2,
  )}\n`;
}

async function waitUntil(
  what: string,
  ok: () => Promise<boolean>,
  died: () => string | undefined,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const why = died();
    if (why) throw new Error(`${what}: ${why}`);
    if (await ok().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

export interface RegistryAnswer {
  status: number;
  body: string;
}

/**
 * One request to an npm registry on a connection of its own (no keep-alive pool: a caller that
 * blocked its event loop in a long `npm publish` would otherwise reuse a socket the registry closed,
 * and fail with EPIPE).
 */
export function registryRequest(
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<RegistryAnswer> {
  const req = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const r = req(url, { method: o.method ?? 'GET', headers: o.headers ?? {}, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    r.setTimeout(o.timeoutMs ?? 60_000, () =>
      r.destroy(new Error(`${o.method ?? 'GET'} ${url}: no answer in time`)),
    );
    r.once('error', reject);
    r.end(o.body);
  });
}

/** The registry's document of a package (its versions, dist-tags, dists), or undefined on 404. */
export async function packageDocument(
  registry: string,
  name: string,
  token?: string,
): Promise<
  | {
      versions: Record<string, { dist: { shasum: string; integrity: string; tarball: string } }>;
      'dist-tags': Record<string, string>;
    }
  | undefined
> {
  const url = `${registry.endsWith('/') ? registry : `${registry}/`}${name.replace('/', '%2f')}`;
  const a = await registryRequest(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (a.status === 404) return undefined;
  if (a.status !== 200) throw new Error(`GET ${url}: ${a.status} ${a.body.slice(0, 300)}`);
  return JSON.parse(a.body);
}

/** Starts a fresh registry (storage and user in `dir`), waits until it answers, creates the publisher. */
export async function startNpmRegistry(opts: { dir: string; upstream?: string }): Promise<NpmRegistry> {
  const entry = installVerdaccio();
  mkdirSync(opts.dir, { recursive: true });
  const config = join(opts.dir, 'verdaccio.yaml');
  writeFileSync(
    config,
    verdaccioConfig({
      storage: join(opts.dir, 'storage'),
      htpasswd: join(opts.dir, 'htpasswd'),
      upstream: opts.upstream ?? upstreamRegistry(),
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const logPath = join(opts.dir, 'verdaccio.log');
  const logFd = openSync(logPath, 'a');
  const child: ChildProcess = spawn(
    process.execPath,
    [entry, '--config', config, '--listen', `127.0.0.1:${port}`],
    {
      stdio: ['ignore', logFd, logFd],
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    },
  );
  closeSync(logFd);
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `verdaccio exited (${signal ?? code}); log ${logPath}:\n${readFileSync(logPath, 'utf8').slice(-2000)}`;
  });
  const stop = async () => {
    if (exited !== undefined || child.exitCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  };
  try {
    await waitUntil(
      `verdaccio ${VERDACCIO_VERSION} answering GET ${url}-/ping (log ${logPath})`,
      async () => (await registryRequest(`${url}-/ping`, { timeoutMs: 5_000 })).status === 200,
      () => exited,
      60_000,
    );
    // The one user (max_users: 1): `npm adduser`'s request, whose answer carries the token.
    const res = await registryRequest(`${url}-/user/org.couchdb.user:claimkit`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'claimkit', password: `release-${port}-${process.pid}`, type: 'user' }),
    });
    const body = JSON.parse(res.body || '{}') as { token?: string; error?: string };
    if (res.status !== 201 || !body.token)
      throw new Error(`creating the publishing user on ${url}: ${res.status} ${body.error ?? res.body}`);
    const npmrc = join(opts.dir, 'npmrc');
    writeFileSync(npmrc, npmrcFor(url, body.token));
    return { url, token: body.token, npmrc, logPath, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** An npm userconfig: the registry and its token (npm's `//host/path/:_authToken=` form). */
export function npmrcFor(registry: string, token: string): string {
  const u = new URL(registry);
  const path = u.pathname.endsWith('/') ? u.pathname : `${u.pathname}/`;
  return `registry=${u.href}\n//${u.host}${path}:_authToken=${token}\n`;
}
