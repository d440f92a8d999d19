// Fails the build when a package imports across the boundaries DESIGN.md draws:
// core is pure (no node:*, @kubernetes/client-node, hono), runtimes never import each other, only
// @claimkit/kube (and the e2e harness, which builds clusters with it) imports client-node, and no
// published package imports a private one (e2e, dev, manifests). Inside core, nothing outside sim/
// imports the simulator (tests break rules by passing data, not by switches in production files),
// and no production file imports the test support in testing/. Core's folders form layers (each
// imports only lower ones; CORE_LAYERS below), and no workspace package's files (packages/*, apps/*,
// tools/*) import a cycle.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const rules: { dir: string; forbidden: RegExp; why: string }[] = [
  {
    dir: 'packages/core/src',
    forbidden: /^(node:|@kubernetes\/client-node|hono|@hono\/|@claimkit\/)/,
    why: 'core is pure: no runtime modules and no other claimkit package',
  },
  {
    dir: 'packages/kube/src',
    forbidden: /^@claimkit\/(controller|webhook|cli|e2e|dev|manifests)/,
    why: 'kube is shared Kubernetes I/O: it imports no runtime package',
  },
  {
    dir: 'packages/controller/src',
    forbidden: /^@claimkit\/(webhook|cli|e2e|dev|manifests)/,
    why: 'runtimes never import each other',
  },
  {
    dir: 'packages/webhook/src',
    forbidden: /^@claimkit\/(controller|cli|e2e|dev|manifests)/,
    why: 'runtimes never import each other',
  },
  {
    dir: 'packages/cli/src',
    forbidden: /^@claimkit\/(controller|webhook|e2e|dev|manifests)/,
    why: 'runtimes never import each other',
  },
  {
    dir: 'apps/e2e/src',
    forbidden: /^@claimkit\/(dev|manifests)/,
    why: 'e2e keeps the harness and the suites; the developer environment builds on it, not the reverse',
  },
  {
    dir: 'apps/dev/src',
    forbidden: /^@kubernetes\/client-node/,
    why: 'the developer environment talks to the cluster through the harness and the packages',
  },
  {
    dir: 'tools/consumer-test/src',
    forbidden: /^@claimkit\/(?!release\/(npm-registry|publish)$)/,
    why: 'the consumer test uses the packages only as a user does: published by the release (its npm registry and npm publish, the only imports), installed by version in its scratch project',
  },
  {
    dir: 'tools/manifests/src',
    forbidden: /^@claimkit\/(e2e|dev|release)/,
    why: 'the generator needs only the builders',
  },
  {
    dir: 'tools/release/src',
    forbidden: /^(@claimkit\/(e2e|dev|controller|webhook|cli|kube)|@kubernetes\/client-node)/,
    why: 'the release plan reads the workspace, core (image names, the version) and the generator',
  },
];
// The webhook's app must not import a runtime either: only its entry files may.
const webhookEntries = /main-(node|deno)\.ts$|serve-.*\.ts$/;

function* files(dir: string): Generator<string> {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) yield p;
  }
}

const importRe =
  /(?:^|\s)(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
const problems: string[] = [];
for (const rule of rules) {
  for (const file of files(join(root, rule.dir))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(importRe)) {
      const spec = m[1] ?? m[2] ?? '';
      if (rule.forbidden.test(spec))
        problems.push(`${relative(root, file)}: imports '${spec}' (${rule.why})`);
      if (
        rule.dir === 'packages/webhook/src' &&
        !webhookEntries.test(file) &&
        !file.endsWith('.test.ts') &&
        /^(node:|@hono\/node-server)/.test(spec)
      ) {
        problems.push(
          `${relative(root, file)}: imports '${spec}' (only the webhook's entry files may use a runtime)`,
        );
      }
    }
  }
}
// One adapter over client-node: every other package reaches the API server through @claimkit/kube.
const clientNodeHomes = ['packages/kube/src', 'apps/e2e/src/harness'];
for (const top of ['packages', 'apps']) {
  for (const pkg of readdirSync(join(root, top))) {
    for (const file of files(join(root, top, pkg, 'src'))) {
      const rel = relative(root, file);
      if (clientNodeHomes.some((home) => rel.startsWith(`${home}/`))) continue;
      for (const m of readFileSync(file, 'utf8').matchAll(importRe)) {
        const spec = m[1] ?? m[2] ?? '';
        if (spec === '@kubernetes/client-node' || spec.startsWith('@kubernetes/client-node/'))
          problems.push(`${rel}: imports '${spec}' (only packages/kube and the e2e harness use client-node)`);
      }
    }
  }
}
// Core's folders other than sim/ never import sim/; their production files never import testing/
// (model/ builds its conformance cases from the fixtures, and is not a production rule folder).
const coreSrc = join(root, 'packages/core/src');
const ruleFolders =
  /^(admission|api|capture|cel|claimset|doctor|invariants|lease|loop|manifests|metrics|options|policies|pool|reconcile|rules|schema)\//;
for (const file of files(coreSrc)) {
  const rel = relative(coreSrc, file);
  if (rel.startsWith('sim/')) continue;
  const isTest = /\.test(-helper)?\.ts$/.test(file);
  for (const m of readFileSync(file, 'utf8').matchAll(importRe)) {
    const spec = m[1] ?? m[2] ?? '';
    if (!spec.startsWith('.')) continue;
    const target = relative(coreSrc, join(file, '..', spec));
    if (target.startsWith('sim/'))
      problems.push(`packages/core/src/${rel}: imports '${spec}' (only sim/ imports the simulator)`);
    if (ruleFolders.test(rel) && !isTest && target.startsWith('testing/'))
      problems.push(`packages/core/src/${rel}: imports '${spec}' (production code never imports testing/)`);
  }
}
// Layers inside core, lowest first. A production file may import its own folder and any folder of a
// lower row, never a row above nor a sibling in its own row. Kept out: testing/ (test support may
// use every layer; the rules above keep production files off it), the root entry index.ts, and test
// files (a test may drive its rules through a higher layer, e.g. a reconcile). A new folder needs a row.
const CORE_LAYERS: { folders: string[]; holds: string }[] = [
  {
    folders: ['api', 'manifests'],
    holds:
      'API types, ports, errors, labels, pod predicates, the Decision and admission vocabularies; image names',
  },
  { folders: ['options'], holds: "the binaries' option tables: parsing, help, one duration syntax" },
  { folders: ['cel'], holds: 'CEL evaluation over schema-typed values' },
  { folders: ['schema'], holds: "the CRDs' schemas and their CEL rules" },
  {
    folders: ['capture', 'claimset'],
    holds: 'capture claims, holder liveness, the capture backend port; claim-set naming and scale-in',
  },
  { folders: ['lease', 'pool'], holds: 'the leader lease; pool pods, scaling, rollout, disruption' },
  { folders: ['model'], holds: 'the in-memory API model, its capture agent and conformance cases' },
  { folders: ['policies'], holds: 'admission policies as data and their evaluator' },
  { folders: ['admission'], holds: "the webhook's admission rules as pure functions; P1 stated once" },
  { folders: ['reconcile'], holds: 'the reconcilers: snapshot, decide, apply; the safety rules' },
  { folders: ['loop'], holds: 'watch event to queue key, the reconciler table' },
  { folders: ['invariants', 'doctor', 'metrics'], holds: 'checks over a whole cluster; metrics' },
  {
    folders: ['rules'],
    holds: "the index of DESIGN.md's rules: every place that enforces or checks each, and README's table",
  },
  { folders: ['sim'], holds: 'the simulator' },
];
// Up-imports allowed, each with why (none today: keep it that way).
const LAYER_EXCEPTIONS: { from: RegExp; to: string; why: string }[] = [];
// Imports the cycle check skips, repo-relative paths (e.g. 'packages/cli/src/a.ts'), each with why
// (none today: keep it that way).
const CYCLE_EXCEPTIONS: { from: string; to: string; why: string }[] = [];
const layerOf = new Map<string, number>();
CORE_LAYERS.forEach((row, i) => {
  for (const folder of row.folders) layerOf.set(folder, i);
});
for (const name of readdirSync(coreSrc)) {
  if (name !== 'testing' && statSync(join(coreSrc, name)).isDirectory() && !layerOf.has(name))
    problems.push(`packages/core/src/${name}/: a core folder without a layer (add it to CORE_LAYERS)`);
}
for (const file of files(coreSrc)) {
  const rel = relative(coreSrc, file);
  const folder = rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : undefined;
  const isTest = /\.test(-helper)?\.ts$/.test(file);
  for (const m of readFileSync(file, 'utf8').matchAll(importRe)) {
    const spec = m[1] ?? m[2] ?? '';
    if (!spec.startsWith('.')) continue;
    const target = relative(coreSrc, join(file, '..', spec));
    if (folder === undefined || folder === 'testing' || isTest) continue;
    const toFolder = target.includes('/') ? target.slice(0, target.indexOf('/')) : undefined;
    if (toFolder === folder || toFolder === 'testing') continue; // testing/: the rule above
    const from = layerOf.get(folder) ?? -1;
    const to = toFolder === undefined ? Number.POSITIVE_INFINITY : (layerOf.get(toFolder) ?? -1);
    if (to < from) continue;
    if (LAYER_EXCEPTIONS.some((x) => x.from.test(rel) && x.to === target)) continue;
    problems.push(
      `packages/core/src/${rel}: imports '${spec}' (${folder}/ may import only lower layers; ${toFolder ?? 'the root entry'} is ${to === from ? 'a sibling' : 'above'})`,
    );
  }
}
// No import cycles in any workspace package (packages/*, apps/*, tools/*: src/ and the package's
// other source folders such as bench/ and scratch/), type-only imports included (a cycle of types
// still ties files that should change apart). Only relative imports make edges: packages reach each
// other by name, and the dependency direction above keeps those acyclic. Depth-first search per
// package; every back edge it meets is printed as its cycle.
function* packageFiles(dir: string): Generator<string> {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* packageFiles(p);
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}
for (const top of ['packages', 'apps', 'tools']) {
  for (const pkg of readdirSync(join(root, top)).sort()) {
    const pkgDir = join(root, top, pkg);
    if (!statSync(pkgDir).isDirectory()) continue;
    const imports = new Map<string, Set<string>>(); // repo-relative file -> the files it imports
    for (const file of packageFiles(pkgDir)) {
      const targets = new Set<string>();
      imports.set(relative(root, file), targets);
      for (const m of readFileSync(file, 'utf8').matchAll(importRe)) {
        const spec = m[1] ?? m[2] ?? '';
        if (spec.startsWith('.')) targets.add(relative(root, join(file, '..', spec)));
      }
    }
    // `./x.js` names `./x.ts` under the TypeScript sources.
    const resolve = (t: string) =>
      imports.has(t)
        ? t
        : imports.has(t.replace(/\.(m?)js$/, '.$1ts'))
          ? t.replace(/\.(m?)js$/, '.$1ts')
          : undefined;
    const skip = (from: string, to: string) => CYCLE_EXCEPTIONS.some((x) => x.from === from && x.to === to);
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (f: string): void => {
      state.set(f, 'open');
      path.push(f);
      for (const imported of imports.get(f) ?? []) {
        const t = resolve(imported);
        if (t === undefined || skip(f, t)) continue;
        if (state.get(t) === 'open') {
          const cycle = [...path.slice(path.indexOf(t)), t];
          problems.push(
            `${top}/${pkg}: import cycle ${cycle.map((c) => relative(`${top}/${pkg}`, c)).join(' -> ')}`,
          );
        } else if (!state.has(t)) visit(t);
      }
      path.pop();
      state.set(f, 'done');
    };
    for (const f of [...imports.keys()].sort()) if (!state.has(f)) visit(f);
  }
}
// Dead exports: every name a core module exports is imported somewhere (core, its tests, another
// package, a README's example) or listed by name in the root entry (index.ts: the deliberate public
// surface). The subpath entries re-export whole files (`export *`), which makes nothing used by
// itself. Imports resolve through re-exports to the module that declares the name.
const DELIBERATE_EXPORTS: { module: RegExp; names?: string[]; why: string }[] = [
  {
    module: /^testing\//,
    why: '`@claimkit/core/testing` is public API on purpose: fixtures, fake timers, model helpers (packages/core/README.md)',
  },
  {
    module: /^sim\/broken-routing\.ts$/,
    names: ['noReferenceRoutes', 'newObjectOnly', 'BROKEN_ROUTING'],
    why: 'routing bugs that seeds 1-12 do not catch today (tried in broken-rules.test.ts): kept so the gap stays visible',
  },
];
type Declared = { module: string; name: string; type: boolean };
const exportCache = new Map<string, Map<string, Declared>>();
const stripComments = (t: string) => t.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
const specFile = (from: string, spec: string) => join(from, '..', spec);
// The names `file` exports, each mapped to the module that declares it.
function exportsOf(file: string): Map<string, Declared> {
  const cached = exportCache.get(file);
  if (cached) return cached;
  const out = new Map<string, Declared>();
  exportCache.set(file, out);
  let text: string;
  try {
    text = stripComments(readFileSync(file, 'utf8'));
  } catch {
    return out;
  }
  const rel = relative(coreSrc, file);
  const imported = new Map<string, { spec: string; orig: string }>();
  for (const m of text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/gm)) {
    for (const n of names(m[1])) imported.set(n.alias, { spec: m[2], orig: n.orig });
  }
  const declRe =
    /^export\s+(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(function\*?|const\s+enum|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;
  for (const m of text.matchAll(declRe))
    out.set(m[2], { module: rel, name: m[2], type: m[1] === 'interface' || m[1] === 'type' });
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}(?:\s*from\s*['"]([^'"]+)['"])?/gm)) {
    for (const n of names(m[1])) {
      const via = m[2] ?? imported.get(n.orig)?.spec;
      const orig = m[2] ? n.orig : (imported.get(n.orig)?.orig ?? n.orig);
      const d = via?.startsWith('.') ? exportsOf(specFile(file, via)).get(orig) : undefined;
      out.set(n.alias, d ?? { module: rel, name: orig, type: false });
    }
  }
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\*\s+from\s*['"]([^'"]+)['"]/gm)) {
    for (const [k, d] of exportsOf(specFile(file, m[1]))) if (!out.has(k)) out.set(k, d);
  }
  return out;
}
function names(list: string): { orig: string; alias: string }[] {
  return list
    .split(',')
    .map((p) => p.trim().replace(/^type\s+/, ''))
    .filter(Boolean)
    .map((p) => {
      const [orig = '', alias] = p.split(/\s+as\s+|\s*:\s*/);
      return { orig, alias: alias ?? orig };
    });
}
const corePkg = JSON.parse(readFileSync(join(root, 'packages/core/package.json'), 'utf8')) as {
  exports: Record<string, string | Record<string, string>>;
};
const entryFiles = new Map<string, string>();
for (const [sub, target] of Object.entries(corePkg.exports)) {
  if (typeof target === 'object' && target['@claimkit/source'])
    entryFiles.set(`@claimkit/core${sub.slice(1)}`, join(root, 'packages/core', target['@claimkit/source']));
}
const used = new Set<string>(); // `module#name`
for (const d of exportsOf(join(coreSrc, 'index.ts')).values()) used.add(`${d.module}#${d.name}`);
const importLists =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]|\{([^}]*)\}\s*=\s*await\s+import\(\s*['"]([^'"]+)['"]\s*\)/g;
const repoFiles = [
  ...['packages', 'apps', 'tools'].flatMap((top) =>
    readdirSync(join(root, top)).flatMap((pkg) => [
      ...files(join(root, top, pkg, 'src')),
      ...files(join(root, top, pkg, 'scratch')),
      join(root, top, pkg, 'README.md'),
    ]),
  ),
  join(root, 'README.md'),
];
for (const file of repoFiles) {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue;
  }
  const inCore = file.startsWith(`${coreSrc}/`);
  for (const m of text.matchAll(importLists)) {
    const list = m[1] ?? m[3] ?? '';
    const spec = m[2] ?? m[4] ?? '';
    let target: string | undefined;
    if (inCore && spec.startsWith('.')) target = specFile(file, spec);
    else if (!inCore || file.endsWith('.md')) target = entryFiles.get(spec);
    if (!target) continue;
    const provided = exportsOf(target);
    for (const n of names(list)) {
      const d = provided.get(n.orig);
      // A file's own re-exports are not uses (a barrel re-exporting a name nobody imports).
      if (d && join(coreSrc, d.module) !== file && (!inCore || !/^export/.test(m[0].trim())))
        used.add(`${d.module}#${d.name}`);
    }
  }
}
for (const file of files(coreSrc)) {
  const rel = relative(coreSrc, file);
  if (/\.test(-helper)?\.ts$/.test(rel) || [...entryFiles.values()].includes(file)) continue;
  const text = stripComments(readFileSync(file, 'utf8'));
  for (const d of exportsOf(file).values()) {
    if (d.module !== rel || used.has(`${rel}#${d.name}`)) continue;
    if (DELIBERATE_EXPORTS.some((x) => x.module.test(rel) && (x.names?.includes(d.name) ?? true))) continue;
    // A type that another declaration of its file uses is part of that declaration's signature.
    if (d.type && (text.match(new RegExp(`\\b${d.name}\\b`, 'g')) ?? []).length > 1) continue;
    problems.push(`packages/core/src/${rel}: exports '${d.name}', which nothing imports (drop the export)`);
  }
}
if (problems.length > 0) {
  console.error(`check-boundaries: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('check-boundaries: ok');
