// The consumer test: what a user gets from a release. Every published package is packed (prepack
// builds it) and published by the release's `npm publish` to a real npm registry (verdaccio); the
// packages are installed from it by version with plain npm into a scratch project in the OS temp
// directory (and with pnpm, and by Deno's npm: specifiers), and the project uses them: a TypeScript
// operator on @claimkit/core type-checks under nodenext and bundler (and with a `source` custom condition of the user's own) and binds a claim
// on core's in-memory model; each bin answers --help and a bad flag; `claimctl simulate` runs; the
// webhook serves one AdmissionReview over HTTPS under Node and under Deno, from node_modules.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type NpmRegistry, packageDocument, startNpmRegistry } from '@claimkit/release/npm-registry';
import { npmPublish, npmVersions, whilePacking } from '@claimkit/release/publish';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createScratchProject,
  denoBinary,
  type PublishedPackage,
  packAll,
  publishedPackages,
  REPO_ROOT,
  runIn,
  startWebhook,
  tarballFiles,
  tarballPackageJson,
  tarballText,
  writeScratchManifest,
  writeSelfSignedCert,
} from './scratch-project.ts';

const work = mkdtempSync(join(tmpdir(), 'claimkit-consumer-'));
const app = join(work, 'app');
const packages: PublishedPackage[] = publishedPackages();
let tarballs = new Map<string, string>();
let registry: NpmRegistry | undefined;
const timings: Record<string, number> = {};

function timed<T>(name: string, fn: () => T): T {
  const t0 = Date.now();
  try {
    return fn();
  } finally {
    timings[name] = Date.now() - t0;
  }
}

beforeAll(async () => {
  tarballs = timed('pack', () => whilePacking(REPO_ROOT, () => packAll(packages, join(work, 'tarballs'))));
  const t0 = Date.now();
  registry = await startNpmRegistry({ dir: join(work, 'npm-registry') });
  timings['npm registry'] = Date.now() - t0;
  timed('npm publish', () => {
    for (const p of packages)
      npmPublish(tarballs.get(p.name)!, 'latest', { npmRegistry: registry!.url, npmToken: registry!.token });
  });
  timed('npm install', () => createScratchProject(app, registry!.url, packages));
}, 600_000);

afterAll(async () => {
  await registry?.stop();
  console.log(`consumer test: ${JSON.stringify(timings)} (scratch project ${app})`);
  if (!process.env.CLAIMKIT_KEEP_CONSUMER) rmSync(work, { recursive: true, force: true });
});

describe('the packed packages', () => {
  it('are the five published packages', () => {
    expect(packages.map((p) => p.name).sort()).toEqual([
      '@claimkit/cli',
      '@claimkit/controller',
      '@claimkit/core',
      '@claimkit/kube',
      '@claimkit/webhook',
    ]);
  });

  it('ship dist/ (built by prepack), README.md and LICENSE, and no sources, tests or test helpers', () => {
    for (const p of packages) {
      const files = tarballFiles(tarballs.get(p.name)!);
      expect(files, p.name).toContain('LICENSE');
      expect(tarballText(tarballs.get(p.name)!, 'LICENSE'), `${p.name} LICENSE`).toBe(
        readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8'),
      );
      expect(files, p.name).toContain('README.md');
      expect(files, p.name).toContain('dist/index.js');
      expect(files, p.name).toContain('dist/index.d.ts');
      const stray = files.filter(
        (f) =>
          !f.startsWith('dist/') ||
          /\.test(-helper)?\.(js|d\.ts)$/.test(f) ||
          (p.name !== '@claimkit/core' && f.startsWith('dist/testing/')),
      );
      expect(stray, p.name).toEqual(
        ['LICENSE', 'README.md', 'package.json'].filter((f) => files.includes(f)),
      );
    }
  });

  it('ship source maps that carry their sources (src/ does not ship, so a map may not point at it)', () => {
    for (const p of packages) {
      const dist = join(app, 'node_modules', p.name, 'dist');
      const maps = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) =>
        f.endsWith('.js.map'),
      );
      expect(maps.length, p.name).toBeGreaterThan(0);
      for (const m of maps) {
        const map = JSON.parse(readFileSync(join(dist, m), 'utf8')) as {
          sources: string[];
          sourcesContent?: (string | null)[];
        };
        expect(map.sources.length, `${p.name} ${m}`).toBeGreaterThan(0);
        expect(map.sourcesContent?.length, `${p.name} ${m}: sourcesContent`).toBe(map.sources.length);
        for (const c of map.sourcesContent ?? []) expect(typeof c, `${p.name} ${m}`).toBe('string');
      }
    }
  });

  it('carry no workspace-only export condition, and real repository metadata', () => {
    for (const p of packages) {
      const pkg = tarballPackageJson(tarballs.get(p.name)!);
      // publishConfig.exports is the workspace's exports without the workspace's own condition:
      // nothing else may differ (a subpath added to one and forgotten in the other).
      expect(pkg.exports, p.name).toEqual(withoutSourceCondition(workspaceManifest(p).exports));
      expect(JSON.stringify(pkg.exports), p.name).not.toContain('@claimkit/source');
      expect(JSON.stringify(pkg), p.name).not.toContain('workspace:');
      expect(pkg.license, p.name).toBe('Apache-2.0');
      expect(pkg.repository, p.name).toEqual({
        type: 'git',
        url: 'git+https://github.com/claimkit/claimkit.git',
        directory: `packages/${p.dir.split('/').pop()}`,
      });
      expect(pkg.bugs, p.name).toEqual({ url: 'https://github.com/claimkit/claimkit/issues' });
    }
  });
});

describe('installed by version from the npm registry', () => {
  const version = () => packages[0]!.version;
  const operatorResult = { phase: 'Bound', podName: 'web-1', claimedBy: 'job-1', violations: [] };

  it('the registry serves each package at the version, the bytes that were packed; a second publish is refused', async () => {
    for (const p of packages) {
      expect(await npmVersions({ npmRegistry: registry!.url }, p.name), p.name).toEqual([p.version]);
      const doc = (await packageDocument(registry!.url, p.name))!;
      const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { version: string; integrity: string }>;
      };
      // What npm installed is what the registry serves is what was packed.
      expect(lock.packages[`node_modules/${p.name}`]?.version, p.name).toBe(p.version);
      expect(lock.packages[`node_modules/${p.name}`]?.integrity, p.name).toBe(
        doc.versions[p.version]!.dist.integrity,
      );
      expect(doc.versions[p.version]!.dist.integrity, p.name).toBe(
        `sha512-${createHash('sha512')
          .update(readFileSync(tarballs.get(p.name)!))
          .digest('base64')}`,
      );
    }
    const core = packages.find((p) => p.name === '@claimkit/core')!;
    expect(() =>
      npmPublish(tarballs.get(core.name)!, 'latest', {
        npmRegistry: registry!.url,
        npmToken: registry!.token,
      }),
    ).toThrow(/cannot publish over the previously published versions|EPUBLISHCONFLICT|409/);
    expect(await npmVersions({ npmRegistry: registry!.url }, core.name)).toEqual([core.version]);
  });

  it('pnpm installs them by version and the operator binds a claim', () => {
    const dir = join(work, 'pnpm-app');
    writeScratchManifest(dir, registry!.url, packages);
    copyFileSync(join(app, 'operator.ts'), join(dir, 'operator.ts'));
    const installed = timed('pnpm install', () =>
      runIn(dir, 'pnpm', ['install', '--ignore-workspace', '--config.confirmModulesPurge=false'], 300_000),
    );
    expect(installed.code, installed.stderr + installed.stdout).toBe(0);
    const r = runIn(dir, process.execPath, ['operator.ts']);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(operatorResult);
  }, 300_000);

  it('Deno runs the operator from npm: specifiers at the version, fetched from the registry', () => {
    const dir = join(work, 'deno-app');
    mkdirSync(dir, { recursive: true });
    // The operator as a Deno user writes it: the same file, its imports as npm:<name>@<version>.
    const source = readFileSync(join(app, 'operator.ts'), 'utf8').replace(
      /from '(@claimkit\/core)(\/[a-z]+)?'/g,
      (_m, name: string, sub: string | undefined) => `from 'npm:${name}@${version()}${sub ?? ''}'`,
    );
    expect(source).toContain(`npm:@claimkit/core@${version()}/model`);
    writeFileSync(join(dir, 'operator.ts'), source);
    writeFileSync(join(dir, '.npmrc'), `registry=${registry!.url}\n`);
    // Deno 2.9 refuses versions younger than a day by default (its minimum dependency age); a
    // project taking a release on its first day says so, as this one does.
    writeFileSync(join(dir, 'deno.json'), `${JSON.stringify({ minimumDependencyAge: 0 })}\n`);
    const r = timed('deno run', () =>
      runIn(dir, denoBinary(), ['run', '-A', '--node-modules-dir=none', 'operator.ts'], 300_000, {
        DENO_DIR: join(work, 'deno-dir'),
        NPM_CONFIG_REGISTRY: registry!.url,
      }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(operatorResult);
    // Fetched from this registry alone: Deno keeps its npm cache per registry (a directory named
    // after its port, for this one) and holds no other.
    const caches = readdirSync(join(work, 'deno-dir', 'npm'));
    expect(caches.length).toBeGreaterThan(0);
    for (const c of caches) expect(c).toContain(new URL(registry!.url).port);
  }, 300_000);
});

describe('an operator on @claimkit/core and a client on @claimkit/kube', () => {
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

  // With a `source` condition of the user's own, and even the workspace's `@claimkit/source` (which the
  // published packages do not carry): neither reaches claimkit's sources. `defaults` sets only what
  // the files need (tsc's defaults otherwise, skipLibCheck false among them): a user's library
  // check reaches every published type and what it imports (client-node's, isomorphic-ws's).
  const configs = ['defaults', 'nodenext', 'bundler', 'source-condition', 'claimkit-source-condition'];
  it('checks the libraries too (skipLibCheck is never on)', () => {
    for (const config of configs) {
      const text = readFileSync(join(app, `tsconfig.${config}.json`), 'utf8');
      expect(text, config).not.toMatch(/"skipLibCheck":\s*true/);
    }
    expect(readFileSync(join(app, 'tsconfig.defaults.json'), 'utf8')).not.toContain('skipLibCheck');
  });
  it.each(configs)('type-checks with tsconfig.%s.json', (config) => {
    const r = runIn(app, process.execPath, [tsc, '-p', `tsconfig.${config}.json`]);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it.each([[[] as string[]], [['--conditions=source']], [['--conditions=@claimkit/source']]])(
    'binds a claim on the in-memory model (node %j)',
    (flags) => {
      const r = runIn(app, process.execPath, [...flags, 'operator.ts']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({
        phase: 'Bound',
        podName: 'web-1',
        claimedBy: 'job-1',
        violations: [],
      });
    },
  );
});

describe('the bins', () => {
  // bin, the name its messages start with, a flag or command its --help documents
  const bins: [string, string, string][] = [
    ['claimctl', 'claimctl', 'simulate'],
    ['kubectl-claimkit', 'kubectl claimkit', 'simulate'],
    ['claimkit-controller', 'claimkit-controller', '--leader-elect'],
    ['claimkit-capture-agent', 'claimkit-capture-agent', '--duration-ms'],
    ['claimkit-webhook', 'claimkit-webhook', '--tls-cert-file'],
  ];

  it.each(bins)('%s --help prints usage to stdout and exits 0', (bin, _shown, documented) => {
    const r = runIn(app, join(app, 'node_modules', '.bin', bin), ['--help']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(documented);
  });

  it.each(bins)('%s answers a bad flag with one line on stderr and exit code 2', (bin, shown) => {
    const r = runIn(app, join(app, 'node_modules', '.bin', bin), ['--no-such-flag']);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
    expect(r.stderrLines).toHaveLength(1);
    expect(r.stderrLines[0]).toMatch(new RegExp(`^(${shown}: |error: ).*--no-such-flag`));
  });

  it('claimctl simulate runs the simulator and finds no violation', () => {
    const r = runIn(
      app,
      join(app, 'node_modules', '.bin', 'claimctl'),
      ['simulate', '--seed', '1', '--steps', '2000'],
      120_000,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok: seed 1, 2000 steps, .*no invariant violated/);
  });
});

describe('the webhook from node_modules', () => {
  let cert: ReturnType<typeof writeSelfSignedCert>;
  beforeAll(() => {
    cert = writeSelfSignedCert(app);
    // A kubeconfig whose API server does not answer: the Deno run loads @kubernetes/client-node
    // from node_modules for the PodClaim watch, which then logs its retries.
    writeFileSync(
      join(app, 'unreachable.kubeconfig'),
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: c, context: {cluster: c, user: u}}]',
        'current-context: c',
        '',
      ].join('\n'),
    );
  });

  const serveFlags = () => [
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--tls-cert-file',
    cert.certFile,
    '--tls-private-key-file',
    cert.keyFile,
  ];

  it('under Node (the claimkit-webhook bin) answers an AdmissionReview over HTTPS', async () => {
    const hook = await startWebhook(app, join(app, 'node_modules', '.bin', 'claimkit-webhook'), [
      ...serveFlags(),
      '--claim-index',
      'off',
    ]);
    try {
      await expectDenial(hook.port, cert.cert);
    } finally {
      expect(await hook.stop()).toBe(0);
    }
  }, 60_000);

  it('under Deno (deno run -A node_modules/@claimkit/webhook/dist/main-deno.js, as its README says)', async () => {
    const deno = denoBinary();
    const entry = join('node_modules', '@claimkit', 'webhook', 'dist', 'main-deno.js');
    const help = runIn(app, deno, ['run', '-A', entry, '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--tls-cert-file PATH');
    const bad = runIn(app, deno, ['run', '-A', entry, '--no-such-flag']);
    expect(bad.code).toBe(2);
    expect(bad.stderrLines).toEqual(['claimkit-webhook: unknown flag --no-such-flag (see --help)']);

    const hook = await startWebhook(app, deno, [
      'run',
      '-A',
      entry,
      ...serveFlags(),
      '--kubeconfig',
      'unreachable.kubeconfig',
    ]);
    try {
      await expectDenial(hook.port, cert.cert);
      await waitFor(() =>
        hook.lines.some((l) => l.includes('"kind":"PodClaim"') && l.includes('127.0.0.1:9')),
      );
    } finally {
      expect(await hook.stop()).toBe(0);
    }
  }, 90_000);
});

function workspaceManifest(p: PublishedPackage): { exports: Record<string, unknown> } {
  return JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8'));
}

function withoutSourceCondition(exports: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(exports).map(([sub, target]) => [
      sub,
      typeof target === 'object' && target !== null
        ? Object.fromEntries(Object.entries(target).filter(([c]) => c !== '@claimkit/source'))
        : target,
    ]),
  );
}

/** A pool pod relabelled from one claim straight to another by a person: the webhook denies it. */
async function expectDenial(port: number, ca: Buffer): Promise<void> {
  const pod = (claim: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-1',
      namespace: 'default',
      labels: { 'claimkit.dev/pool': 'web', 'claimkit.dev/state': 'Bound', 'claimkit.dev/claimed-by': claim },
      annotations: { 'claimkit.dev/claimed-by-uid': `uid-${claim}` },
    },
    spec: { containers: [{ name: 'main', image: 'nginx' }] },
  });
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'consumer-1',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'web-1',
      namespace: 'default',
      operation: 'UPDATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      object: pod('b'),
      oldObject: pod('a'),
      dryRun: false,
    },
  };
  const res = await post(port, '/validate/pods', JSON.stringify(review), ca);
  expect(res.status).toBe(200);
  const out = JSON.parse(res.body) as {
    kind: string;
    response: { uid: string; allowed: boolean; status?: { message?: string } };
  };
  expect(out.kind).toBe('AdmissionReview');
  expect(out.response.uid).toBe('consumer-1');
  expect(out.response.allowed).toBe(false);
  expect(out.response.status?.message).toMatch(/claimed-by/);
}

function post(
  port: number,
  path: string,
  body: string,
  ca: Buffer,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path,
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json' },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

async function waitFor(ok: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
