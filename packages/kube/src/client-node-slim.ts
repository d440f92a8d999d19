// client-node's KubeConfig without the rest of client-node. Its config.js imports the generated
// API's index (every API class and model) for the two names its makeApiClient uses; loading that
// index is ~45 MB of RSS in a Node 24 process (130 against 87 MB for KubeConfig alone), a fifth of a
// controller caching 10,000 claims and pods, and claimkit never calls makeApiClient. On Node, a
// module resolve hook gives config.js those names from the two generated files that define them.
// Every other import resolves as before; where hooks do not exist (Deno) or config.js imports a
// name not listed here (another client-node version), the full index loads, as it always did.
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

type ResolveHook = (
  specifier: string,
  context: { parentURL?: string },
  next: (specifier: string, context: { parentURL?: string }) => unknown,
) => unknown;
type RegisterHooks = (hooks: { resolve: ResolveHook }) => unknown;

let installed = false;
let slimmed = false;

/** Whether config.js was given the slim index (for tests and the start-up log). */
export const clientNodeSlimmed = (): boolean => slimmed;

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

/** Installs the resolve hook once (a no-op where `node:module` has no registerHooks). */
export function slimClientNode(): void {
  if (installed) return;
  installed = true;
  const register = (nodeModule as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof register !== 'function') return;
  register({
    resolve(specifier, context, next) {
      const parent = context.parentURL;
      if (specifier !== GEN_INDEX || !parent?.startsWith('file:') || !parent.endsWith(CONFIG_JS))
        return next(specifier, context);
      let source: string | undefined;
      try {
        const names = genIndexImports(readFileSync(fileURLToPath(parent), 'utf8'));
        source = names && slimIndexSource(parent, names);
      } catch {
        source = undefined;
      }
      if (source === undefined) return next(specifier, context);
      slimmed = true;
      return { url: `data:text/javascript,${encodeURIComponent(source)}`, shortCircuit: true };
    },
  });
}
