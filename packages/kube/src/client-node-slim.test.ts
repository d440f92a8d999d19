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
import { genIndexImports, slimIndexSource } from './client-node-slim.ts';

const here = dirname(fileURLToPath(import.meta.url));
const clientNodeDist = join(
  dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json')),
  'dist',
);

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
    const script = [
      `const kube = await import(${JSON.stringify(pathToFileURL(join(here, 'index.ts')).href)});`,
      `const kc = kube.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} });`,
      'const slimmed = kube.clientNodeSlimmed();',
      // makeApiClient uses the two names the slim index gives config.js.
      "const { CoreV1Api } = await import('@kubernetes/client-node');",
      'const api = kc.makeApiClient(CoreV1Api);',
      'console.log(JSON.stringify({ slimmed, server: kc.getCurrentCluster().server, api: typeof api.listNamespacedPod }));',
    ].join('\n');
    const r = spawnSync(
      process.execPath,
      ['--conditions=@claimkit/source', '--input-type=module', '-e', script],
      {
        cwd: here,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toEqual({
      slimmed: true,
      server: 'https://127.0.0.1:6443',
      api: 'function',
    });
  });
});
