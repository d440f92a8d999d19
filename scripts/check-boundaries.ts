// Fails the build when a package imports across the boundaries DESIGN.md draws:
// core is pure (no node:*, @kubernetes/client-node, hono), runtimes never import each other, only
// @claimkit/kube (and the e2e harness, which builds clusters with it) imports client-node, and no
// published package imports a private one (e2e, dev, manifests). Inside core, nothing outside sim/
// imports the simulator (tests break rules by passing data, not by switches in production files),
// and no production file imports the test support in testing/.
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
    forbidden: /^@claimkit\//,
    why: 'the consumer test uses the packages only as a user does: packed, installed in its scratch project',
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
  /^(api|capture|cel|claimset|doctor|invariants|lease|loop|manifests|metrics|policies|pool|reconcile|schema)\//;
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
if (problems.length > 0) {
  console.error(`check-boundaries: ${problems.length} forbidden import(s):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('check-boundaries: ok');
