// client-node's KubeConfig without the rest of client-node. Its config.js imports the generated
// API's index (every API class and model) for the two names its makeApiClient uses; loading that
// index is ~45 MB of RSS in a Node 24 process (130 against 87 MB for KubeConfig alone), a fifth of a
// controller caching 10,000 claims and pods, and claimkit never calls makeApiClient. On Node, a
// module resolve hook gives config.js those names from the two generated files that define them.
// The same hook defers the packages config.js (and the fetch library under it) imports for proxies
// and the fetch backend only (undici, socks, socks-proxy-agent, hpagent: ~17 MB of RSS, undici most
// of it): each name they import becomes a stand-in that loads the package on first use (a
// construction, a call or a property read), so a proxied cluster or the fetch backend works as
// before. Every other import resolves as before; where hooks do not exist (Deno), or config.js
// imports a name not listed here or a package other than by named imports (another client-node
// version), the module loads as it always did.
import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

/** The generated file (under dist/gen/) that defines each name config.js imports from './gen/index.js'. */
const SLIM_EXPORTS: Readonly<Record<string, string>> = {
  createConfiguration: 'configuration.js',
  ServerConfiguration: 'servers.js',
};
const CONFIG_JS = '/@kubernetes/client-node/dist/config.js';
const GEN_INDEX = './gen/index.js';
const CLIENT_NODE_DIST = '/@kubernetes/client-node/dist/';
/** Packages client-node imports at load time but needs only for a proxy or the fetch backend. */
const DEFERRED_PACKAGES: ReadonlySet<string> = new Set(['undici', 'socks', 'socks-proxy-agent', 'hpagent']);

type ResolveHook = (
  specifier: string,
  context: { parentURL?: string; conditions?: readonly string[] },
  next: (specifier: string, context: { parentURL?: string; conditions?: readonly string[] }) => unknown,
) => unknown;
type RegisterHooks = (hooks: { resolve: ResolveHook }) => unknown;

let installed = false;
let slimmed = false;
const deferred = new Set<string>();
/** client-node modules' source, read once: config.js asks for five hooked specifiers. */
const sources = new Map<string, string>();

function sourceOf(url: string): string {
  let text = sources.get(url);
  if (text === undefined) {
    text = readFileSync(fileURLToPath(url), 'utf8');
    sources.set(url, text);
  }
  return text;
}

/** Whether config.js was given the slim index (for tests and the start-up log). */
export const clientNodeSlimmed = (): boolean => slimmed;

/** The packages client-node's modules were given stand-ins for (for tests and the start-up log). */
export const clientNodeDeferred = (): string[] => [...deferred].sort();

/** The names config.js's source imports from './gen/index.js', or undefined when it cannot tell. */
export function genIndexImports(configSource: string): string[] | undefined {
  const m = /import\s*\{([^}]*)\}\s*from\s*['"]\.\/gen\/index\.js['"]/.exec(configSource);
  if (!m) return undefined;
  return m[1]!
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A module exporting `names` from the generated files next to `configUrl`, or undefined if one is unknown. */
export function slimIndexSource(configUrl: string, names: readonly string[]): string | undefined {
  if (names.length === 0 || names.some((n) => !Object.hasOwn(SLIM_EXPORTS, n) || n.includes(' as ')))
    return undefined;
  const gen = new URL('./gen/', configUrl).href;
  return names.map((n) => `export { ${n} } from ${JSON.stringify(gen + SLIM_EXPORTS[n])};`).join('\n');
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What `source` imports from `specifier` as `[imported, local]` pairs, when its only imports of it
 * are named (`import { a, b as c } from 'x'`); undefined for a default, namespace, side-effect or
 * dynamic import, a re-export, or none.
 */
export function namedImports(source: string, specifier: string): [string, string][] | undefined {
  const from = `from\\s*['"]${escapeRegExp(specifier)}['"]`;
  const all = [...source.matchAll(new RegExp(`import\\s+([^;]*?)\\s*${from}`, 'g'))];
  const quoted = `['"]${escapeRegExp(specifier)}['"]`;
  // A side-effect or dynamic import, or a re-export, needs the real module.
  const other = new RegExp(`import\\s*${quoted}|import\\s*\\(\\s*${quoted}|export[^;]*?${from}`);
  if (all.length === 0 || other.test(source)) return undefined;
  const pairs: [string, string][] = [];
  for (const m of all) {
    const clause = m[1]!.trim();
    if (!clause.startsWith('{') || !clause.endsWith('}')) return undefined;
    for (const part of clause.slice(1, -1).split(',')) {
      const words = part.trim().split(/\s+/).filter(Boolean);
      if (words.length === 0) continue;
      if (words[0] === 'type') return undefined;
      if (words.length === 1) pairs.push([words[0]!, words[0]!]);
      else if (words.length === 3 && words[1] === 'as') pairs.push([words[0]!, words[2]!]);
      else return undefined;
    }
  }
  return pairs.length > 0 ? pairs : undefined;
}

/**
 * A module exporting, for each imported name, a stand-in that loads the module at `realUrl` (what
 * the import resolved to, by its path: a require of the package's name would come back to this hook)
 * with require (proxies' traps are synchronous) when it is first constructed, called or read, and
 * forwards to the real export from then on.
 */
export function deferredModuleSource(realUrl: string, names: readonly string[]): string {
  const path = fileURLToPath(realUrl);
  const lines = [
    "import { createRequire } from 'node:module';",
    'let loaded;',
    `const load = () => (loaded ??= createRequire(${JSON.stringify(realUrl)})(${JSON.stringify(path)}));`,
    'const standIn = (name) => {',
    '  const real = () => load()[name];',
    '  const proxy = new Proxy(function () {}, {',
    '    get: (_, key) => Reflect.get(real(), key),',
    '    set: (_, key, value) => Reflect.set(real(), key, value),',
    '    has: (_, key) => Reflect.has(real(), key),',
    '    apply: (_, self, args) => Reflect.apply(real(), self, args),',
    // A subclass of the stand-in constructs as a subclass of the real class.
    '    construct: (_, args, newTarget) =>',
    '      Reflect.construct(real(), args, newTarget === proxy ? real() : newTarget),',
    '  });',
    '  return proxy;',
    '};',
  ];
  for (const n of new Set(names)) lines.push(`export const ${n} = standIn(${JSON.stringify(n)});`);
  return lines.join('\n');
}

const dataModule = (source: string) => ({
  url: `data:text/javascript,${encodeURIComponent(source)}`,
  shortCircuit: true,
});

function deferredResolution(specifier: string, parent: string, realUrl: string) {
  if (!realUrl.startsWith('file:')) return undefined;
  let names: string[] | undefined;
  try {
    names = namedImports(sourceOf(parent), specifier)?.map(([n]) => n);
  } catch {
    names = undefined;
  }
  if (!names || names.some((n) => n === 'default' || !/^[A-Za-z_$][\w$]*$/.test(n))) return undefined;
  deferred.add(specifier);
  return dataModule(deferredModuleSource(realUrl, names));
}

/** Installs the resolve hook once (a no-op where `node:module` has no registerHooks). */
export function slimClientNode(): void {
  if (installed) return;
  installed = true;
  const register = (nodeModule as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof register !== 'function') return;
  register({
    resolve(specifier, context, next) {
      const parent = context.parentURL;
      // Imports only (client-node is ESM; a runner such as vitest adds 'import' to a require's
      // conditions, so 'require' is what tells them apart); the stand-in requires the package by
      // its path, which never comes back here.
      if (
        DEFERRED_PACKAGES.has(specifier) &&
        !context.conditions?.includes('require') &&
        parent?.startsWith('file:') &&
        parent.includes(CLIENT_NODE_DIST)
      ) {
        const real = next(specifier, context) as { url?: string };
        return (real.url && deferredResolution(specifier, parent, real.url)) || real;
      }
      if (specifier !== GEN_INDEX || !parent?.startsWith('file:') || !parent.endsWith(CONFIG_JS))
        return next(specifier, context);
      let source: string | undefined;
      try {
        const names = genIndexImports(sourceOf(parent));
        source = names && slimIndexSource(parent, names);
      } catch {
        source = undefined;
      }
      if (source === undefined) return next(specifier, context);
      slimmed = true;
      return dataModule(source);
    },
  });
}
