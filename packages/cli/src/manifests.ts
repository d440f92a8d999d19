// claimctl manifests: deployable YAML for the chosen components, embedded in the package
// (manifests.generated.ts, written by tools/manifests from deploy/).
import { defineOptions } from '@claimkit/core/options';
import { parseCommand, UsageError } from './args.ts';
import { flagsHelp, showHelp } from './commands/common.ts';
import type { Ctx } from './context.ts';
import type { ManifestText } from './manifest-text.ts';
import { COMPONENTS, MANIFESTS } from './manifests.generated.ts';

type Component = (typeof COMPONENTS)[number];

export const MANIFESTS_OPTIONS = defineOptions({
  components: {
    type: 'list',
    // What completion offers; parseComponents checks them.
    values: COMPONENTS,
    default: COMPONENTS,
    defaultText: 'all',
    help: `comma-separated: ${COMPONENTS.join(', ')}`,
  },
});

export const MANIFESTS_HELP = `Print deployable YAML (one multi-document stream) for claimkit components.

Usage:
  claimctl manifests [--components ${COMPONENTS.join(',')}]

Components are printed in that order (CRDs first); a document shared by two components (the
claimkit-system Namespace) is printed once. The policies are ValidatingAdmissionPolicies (Kubernetes
1.30 or newer) that let only the controller's ServiceAccount (claimkit-system/claimkit-controller)
write a claim's podName, nodeName and sourcePod, and keep pool pod labels consistent.

Examples:
  claimctl manifests | kubectl apply -f -
  claimctl manifests --components crds | kubectl apply --server-side -f -

${flagsHelp(MANIFESTS_OPTIONS)}`;

/** Splits a YAML stream into documents, without comment-only ones. */
function documents(yaml: string): string[] {
  return yaml
    .split(/^---[ \t]*$/m)
    .map((d) => d.trim())
    .filter((d) => d.split('\n').some((l) => l.trim() !== '' && !l.trimStart().startsWith('#')));
}

function identity(doc: string): string | undefined {
  const kind = doc.match(/^kind:\s*(\S+)/m)?.[1];
  const meta = doc.match(/^metadata:\s*\n((?:[ \t]+.*\n?)*)/m)?.[1] ?? '';
  const name = meta.match(/^ {2}name:\s*(\S+)/m)?.[1];
  const ns = meta.match(/^ {2}namespace:\s*(\S+)/m)?.[1] ?? '';
  return kind && name ? `${kind}/${ns}/${name}` : undefined;
}

export function renderManifests(
  components: readonly Component[],
  data: Record<Component, ManifestText[]> = MANIFESTS,
): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of COMPONENTS) {
    if (!components.includes(c)) continue;
    for (const f of data[c]) {
      for (const doc of documents(f.yaml)) {
        const id = identity(doc);
        if (id && seen.has(id)) continue;
        if (id) seen.add(id);
        out.push(`# Source: deploy/${c}/${f.file}\n${doc}`);
      }
    }
  }
  return out.map((d) => `---\n${d}`).join('\n');
}

/** --components' values (split and trimmed by the table), checked. */
export function parseComponents(parts: readonly string[]): Component[] {
  if (parts.length === 0) throw new UsageError('--components must name at least one component');
  for (const p of parts) {
    if (!(COMPONENTS as readonly string[]).includes(p)) {
      throw new UsageError(`unknown component ${JSON.stringify(p)} (want: ${COMPONENTS.join(', ')})`);
    }
  }
  return parts as Component[];
}

export async function runManifests(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand(MANIFESTS_OPTIONS, argv);
  if (!line) return showHelp(ctx, MANIFESTS_HELP);
  if (line.positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(line.positionals[0])}`);
  const components = parseComponents(line.values.components);
  const missing = components.filter((c) => MANIFESTS[c].length === 0);
  for (const c of missing) ctx.err(`warning: this build of claimctl has no manifests for ${c}`);
  ctx.out(renderManifests(components));
  return 0;
}
