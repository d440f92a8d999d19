// KubeConfig without client-node's generated API index: the names config.js imports from it are read
// from its source, given from their own files, and anything unknown falls back to the full index.
// The hook is checked in a fresh Node process (this worker may have loaded client-node already).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deferredModuleSource, genIndexImports, namedImports, slimIndexSource } from './client-node-slim.ts';

const here = dirname(fileURLToPath(import.meta.url));
const clientNodeDist = join(
  dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json')),
  'dist',
);

function writeKubeconfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ck-slim-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
      'users: [{name: u, user: {token: t0k3n}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'),
  );
  return kubeconfig;
}

/** Script lines that import @claimkit/kube (from source) as `kube` and load `kubeconfig` as `kc`. */
const loadingKube = (kubeconfig: string): string[] => [
  `const kube = await import(${JSON.stringify(pathToFileURL(join(here, 'index.ts')).href)});`,
  `const kc = kube.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} });`,
];

/** Runs an ES module script in a fresh Node process (source condition) and parses its last line. */
function runFresh(script: string, flags: string[] = []): unknown {
  const r = spawnSync(
    process.execPath,
    ['--conditions=@claimkit/source', ...flags, '--input-type=module', '-e', script],
    {
      cwd: here,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

describe('client-node without its generated API index', () => {
  it("reads the names config.js imports from './gen/index.js' in the installed client-node", () => {
    const names = genIndexImports(readFileSync(join(clientNodeDist, 'config.js'), 'utf8'));
    expect(names?.sort()).toEqual(['ServerConfiguration', 'createConfiguration']);
    expect(genIndexImports("import { x } from './other.js';")).toBeUndefined();
  });

  it('builds the slim index from the files that define those names, and none for a name it does not know', () => {
    const config = pathToFileURL(join(clientNodeDist, 'config.js')).href;
    const src = slimIndexSource(config, ['createConfiguration', 'ServerConfiguration'])!;
    expect(src).toContain('/dist/gen/configuration.js"');
    expect(src).toContain('/dist/gen/servers.js"');
    expect(slimIndexSource(config, ['createConfiguration', 'CoreV1Api'])).toBeUndefined();
    expect(slimIndexSource(config, [])).toBeUndefined();
  });

  it('a Node process importing @claimkit/kube loads KubeConfig slim, and a kubeconfig works with client-node as before', () => {
    const kubeconfig = writeKubeconfig();
    const script = [
      ...loadingKube(kubeconfig),
      'const slimmed = kube.clientNodeSlimmed();',
      // makeApiClient uses the two names the slim index gives config.js.
      "const { CoreV1Api } = await import('@kubernetes/client-node');",
      'const api = kc.makeApiClient(CoreV1Api);',
      'console.log(JSON.stringify({ slimmed, server: kc.getCurrentCluster().server, api: typeof api.listNamespacedPod }));',
    ].join('\n');
    expect(runFresh(script)).toEqual({
      slimmed: true,
      server: 'https://127.0.0.1:6443',
      api: 'function',
    });
  });
});

describe("client-node's proxy and fetch packages, loaded on first use", () => {
  const configSource = readFileSync(join(clientNodeDist, 'config.js'), 'utf8');

  it('reads the names config.js and its fetch library import from the deferred packages', () => {
    expect(namedImports(configSource, 'undici')).toEqual([
      ['Agent', 'UndiciAgent'],
      ['ProxyAgent', 'UndiciProxyAgent'],
    ]);
    expect(namedImports(configSource, 'socks')).toEqual([['SocksClient', 'SocksClient']]);
    expect(namedImports(configSource, 'socks-proxy-agent')).toEqual([['SocksProxyAgent', 'SocksProxyAgent']]);
    expect(namedImports(configSource, 'hpagent')).toEqual([
      ['HttpProxyAgent', 'HttpProxyAgent'],
      ['HttpsProxyAgent', 'HttpsProxyAgent'],
    ]);
    const fetchSource = readFileSync(join(clientNodeDist, 'gen/http/isomorphic-fetch.js'), 'utf8');
    expect(namedImports(fetchSource, 'undici')).toEqual([['fetch', 'fetch']]);
  });

  it('refuses a module that needs the real package: default, namespace, side-effect or dynamic import, a re-export', () => {
    expect(namedImports("import x from 'undici';", 'undici')).toBeUndefined();
    expect(namedImports("import * as u from 'undici';", 'undici')).toBeUndefined();
    expect(namedImports("import x, { Agent } from 'undici';", 'undici')).toBeUndefined();
    expect(namedImports("import { Agent } from 'undici';\nimport 'undici';", 'undici')).toBeUndefined();
    expect(
      namedImports("import { Agent } from 'undici';\nawait import('undici');", 'undici'),
    ).toBeUndefined();
    expect(
      namedImports("import { Agent } from 'undici';\nexport { fetch } from 'undici';", 'undici'),
    ).toBeUndefined();
    expect(namedImports("import { Agent } from 'undici-types';", 'undici')).toBeUndefined();
    expect(namedImports("import { a } from 'x';", 'undici')).toBeUndefined();
  });

  it('gives each imported name a stand-in, once', () => {
    const src = deferredModuleSource('file:///x/undici/index.js', ['Agent', 'fetch', 'Agent']);
    expect(src.match(/^export const /gm)).toHaveLength(2);
    expect(src).toContain('export const Agent = standIn("Agent");');
    // By its path: a require of the name would come back to the hook.
    expect(src).toContain('createRequire("file:///x/undici/index.js")("/x/undici/index.js")');
  });

  // With --conditions=import as well, a require carries 'import' among its conditions, as it does
  // under vitest: the stand-in's require must still get the real package.
  it.each([
    ['', []],
    [' (with import among a require’s conditions)', ['--conditions=import']],
  ])(
    'a Node process loading a kubeconfig loads none of them, and a proxied cluster or the fetch library gets the real ones%s',
    (_, flags) => {
      const kubeconfig = writeKubeconfig();
      const script = [
        "import { createRequire } from 'node:module';",
        "import { createServer } from 'node:http';",
        ...loadingKube(kubeconfig),
        "const packages = ['undici', 'socks', 'socks-proxy-agent', 'hpagent'];",
        'const loaded = () => packages.filter((p) => Object.keys(createRequire(import.meta.url).cache)',
        "  .some((f) => f.includes('/node_modules/' + p + '/')));",
        'const before = loaded();',
        `const real = createRequire(${JSON.stringify(pathToFileURL(join(clientNodeDist, 'config.js')).href)});`,
        "const proxied = { name: 'p', server: 'https://10.0.0.1:6443', proxyUrl: 'http://127.0.0.1:3128' };",
        'const dispatcher = kc.createDispatcher(proxied, { ca: Buffer.from([]) });',
        "const socks = kc.createAgent({ name: 's', server: 'https://10.0.0.1:6443', proxyUrl: 'socks5://127.0.0.1:1080' }, {});",
        'const https = kc.createAgent(proxied, {});',
        // The fetch library's undici fetch, against a local server.
        "const server = createServer((_, res) => res.end('pong')).listen(0, '127.0.0.1');",
        "await new Promise((r) => server.once('listening', r));",
        "const { IsomorphicFetchHttpLibrary, RequestContext } = await import('@kubernetes/client-node/dist/gen/http/http.js');",
        "const ctx = new RequestContext('http://127.0.0.1:' + server.address().port + '/ping', 'GET');",
        'const resp = await new IsomorphicFetchHttpLibrary().send(ctx).toPromise();',
        'const body = await resp.body.text();',
        'server.close();',
        'console.log(JSON.stringify({',
        '  deferred: kube.clientNodeDeferred(), before,',
        "  proxyAgent: dispatcher instanceof real('undici').ProxyAgent,",
        "  socksAgent: socks instanceof real('socks-proxy-agent').SocksProxyAgent,",
        "  httpsProxyAgent: https instanceof real('hpagent').HttpsProxyAgent,",
        '  fetched: [resp.httpStatusCode, body], after: loaded(),',
        '}));',
      ].join('\n');
      expect(runFresh(script, flags)).toEqual({
        deferred: ['hpagent', 'socks', 'socks-proxy-agent', 'undici'],
        before: [],
        proxyAgent: true,
        socksAgent: true,
        httpsProxyAgent: true,
        fetched: [200, 'pong'],
        // socks by socks-proxy-agent.
        after: ['undici', 'socks', 'socks-proxy-agent', 'hpagent'],
      });
    },
  );
});
