// What a controller process loads: every module costs resident memory for the process's life, so
// what the controller never runs stays unloaded. CEL (core's schema rules, ~17 MB of RSS) lives
// behind @claimkit/core/model; client-node's generated API index and its proxy and fetch packages
// behind @claimkit/kube's resolve hook. Checked in a fresh Node process that records every module
// loaded while the controller's entry points load.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

/** Modules a controller must not load, by a part of their resolved URL. */
const NOT_LOADED = [
  '/@bufbuild/cel/',
  '/@bufbuild/protobuf/',
  '/@kubernetes/client-node/dist/gen/index.js',
  '/@kubernetes/client-node/dist/gen/apis/',
  '/undici/',
  '/socks-proxy-agent/',
  '/hpagent/',
];

function loadedBy(entry: string): string[] {
  const script = [
    "import { registerHooks } from 'node:module';",
    'const urls = [];',
    // Loaded, not just resolved: a hook may resolve a package to hand out a stand-in for it.
    'registerHooks({ load(url, c, next) { urls.push(url); return next(url, c); } });',
    `await import(${JSON.stringify(pathToFileURL(join(SRC, entry)).href)});`,
    'console.log(JSON.stringify(urls));',
  ].join('\n');
  const r = spawnSync(
    process.execPath,
    ['--conditions=@claimkit/source', '--input-type=module', '-e', script],
    {
      cwd: SRC,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as string[];
}

describe('what the controller loads', () => {
  it("its index and Manager load neither CEL nor client-node's generated API, proxy or fetch packages", () => {
    const urls = loadedBy('index.ts');
    // The check sees the modules it should: core's root and client-node's KubeConfig are there.
    expect(urls.some((u) => u.includes('/core/src/index.ts'))).toBe(true);
    expect(urls.some((u) => u.endsWith('/@kubernetes/client-node/dist/config.js'))).toBe(true);
    for (const part of NOT_LOADED)
      expect(
        urls.filter((u) => u.includes(part)),
        part,
      ).toEqual([]);
  }, 60_000);
});
