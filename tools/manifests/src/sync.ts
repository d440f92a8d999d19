// The one write-or-check routine: compares each generated file with the one on disk and either
// writes the differences (and removes manifests nobody generates any more) or only reports them.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { GeneratedFile } from './generated-file.ts';

export interface SyncOptions {
  /** The repository root the paths are relative to. */
  root: string;
  /** Report only; write nothing. */
  check: boolean;
  /** Directories (relative to root) where every manifest must be a generated file. */
  generatedDirs: readonly string[];
}

export interface SyncReport {
  /** Generated files missing or different on disk (written unless check). */
  outOfDate: string[];
  /** Manifests in a generated directory that nothing generates (removed unless check). */
  notGenerated: string[];
}

const MANIFEST = /\.(ya?ml|json)$/;

function* walk(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else yield p;
  }
}

export function syncFiles(files: readonly GeneratedFile[], o: SyncOptions): SyncReport {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new Error(`two generated files share the path ${f.path}`);
    seen.add(f.path);
  }
  const outOfDate: string[] = [];
  for (const f of files) {
    const path = join(o.root, f.path);
    if (existsSync(path) && readFileSync(path, 'utf8') === f.text) continue;
    outOfDate.push(f.path);
    if (o.check) continue;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.text);
  }
  const notGenerated: string[] = [];
  for (const dir of o.generatedDirs) {
    for (const path of walk(join(o.root, dir))) {
      const rel = relative(o.root, path).split(sep).join('/');
      if (!MANIFEST.test(rel) || seen.has(rel)) continue;
      notGenerated.push(rel);
      if (!o.check) rmSync(path);
    }
  }
  return { outOfDate, notGenerated };
}
