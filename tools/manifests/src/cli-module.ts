// packages/cli/src/manifests.generated.ts: the YAML of deploy/{crds,policies,controller,webhook}
// embedded in claimctl (`claimctl manifests`), so the published CLI carries it. The module is
// written in the form Biome formats it to, so that `biome ci` passes and the text compares exactly.
import { type GeneratedFile, generatedHeader } from './generated-file.ts';

export const CLI_MODULE_PATH = 'packages/cli/src/manifests.generated.ts';

/** The components `claimctl manifests` offers, in the order it prints them (CRDs first). */
export const CLI_COMPONENTS = ['crds', 'policies', 'controller', 'webhook'] as const;

/** One file of a component, as the CLI embeds it (packages/cli/src/manifest-text.ts, which the module imports). */
interface ManifestText {
  file: string;
  yaml: string;
}

/**
 * A component's files in apply order: the order of its kustomization's `resources`, then any file it
 * does not list; without a kustomization, alphabetical with namespace.yaml first.
 */
export function componentInApplyOrder(deploy: readonly GeneratedFile[], component: string): ManifestText[] {
  const dir = `deploy/${component}/`;
  const files = new Map(
    deploy
      .filter((f) => f.path.startsWith(dir) && /\.ya?ml$/.test(f.path))
      .map((f) => [f.path.slice(dir.length), f]),
  );
  const kustomization = files.get('kustomization.yaml')?.objects?.[0] as { resources?: string[] } | undefined;
  files.delete('kustomization.yaml');
  const names = [...files.keys()].sort((a, b) =>
    a === 'namespace.yaml' ? -1 : b === 'namespace.yaml' ? 1 : a.localeCompare(b),
  );
  const listed = (kustomization?.resources ?? []).filter((f) => files.has(f));
  const order = [...listed, ...names.filter((f) => !listed.includes(f))];
  return order.map((file) => ({ file, yaml: files.get(file)!.text }));
}

/** A string literal as Biome writes it: single quotes unless the text has more of them than of `"`. */
export function tsString(s: string): string {
  const singles = s.split("'").length - 1;
  const doubles = s.split('"').length - 1;
  const q = singles > doubles ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === q) out += `\\${q}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x2028 || code === 0x2029)
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + q;
}

export function cliModule(deploy: readonly GeneratedFile[]): GeneratedFile {
  const lines = [
    generatedHeader('//', `deploy/{${CLI_COMPONENTS.join(',')}}`).trimEnd(),
    "import type { ManifestText } from './manifest-text.ts';",
    '',
    `export const COMPONENTS = [${CLI_COMPONENTS.map(tsString).join(', ')}] as const;`,
    '',
    'export const MANIFESTS: Record<(typeof COMPONENTS)[number], ManifestText[]> = {',
  ];
  for (const c of CLI_COMPONENTS) {
    const files = componentInApplyOrder(deploy, c);
    if (files.length === 0) {
      lines.push(`  ${c}: [],`);
      continue;
    }
    lines.push(`  ${c}: [`);
    for (const f of files) {
      lines.push('    {', `      file: ${tsString(f.file)},`, `      yaml: ${tsString(f.yaml)},`, '    },');
    }
    lines.push('  ],');
  }
  lines.push('};', '');
  return { path: CLI_MODULE_PATH, text: lines.join('\n') };
}
