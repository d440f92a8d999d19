// claimctl get TYPE [NAME...]: kubectl-like listing in table, wide, json, yaml and name formats.
import { type AnyObject, type Client, type KubeObject, toYaml } from '@claimkit/core';
import { defineOptions } from '@claimkit/core/options';
import { parseCommand, UsageError } from '../args.ts';
import type { Ctx } from '../context.ts';
import { table } from '../output.ts';
import { type ResourceInfo, resolveResource } from '../resources.ts';
import { connect, flagsHelp, NAMESPACED_OPTIONS, namespaceOf, SELECTOR_OPTIONS, showHelp } from './common.ts';

export const GET_OPTIONS = defineOptions({
  ...NAMESPACED_OPTIONS,
  ...SELECTOR_OPTIONS,
  output: {
    type: 'enum',
    short: 'o',
    values: ['table', 'wide', 'json', 'yaml', 'name'],
    default: 'table',
    help: 'output format',
  },
});

export type OutputFormat = (typeof GET_OPTIONS.output.values)[number];

export const GET_HELP = `Show claimkit resources.

Usage:
  claimctl get TYPE [NAME...] [flags]

Types (short names): captures (cap), podpools (pool), podclaims (pc), podclaimsets (pcs)

Examples:
  claimctl get pc                       # claims in the current namespace
  claimctl get cap -A -o wide           # captures everywhere, with backend and result
  claimctl get pcs web -o yaml
  claimctl get pc -l claimkit.dev/claim-set=web -o name

${flagsHelp(GET_OPTIONS)}`;

/** Lists or gets the objects a `get`/`describe` names. */
export async function fetchObjects(
  client: Client,
  r: ResourceInfo,
  names: string[],
  namespace: string | undefined,
  selector: string | undefined,
): Promise<KubeObject[]> {
  if (names.length > 0 && selector) {
    throw new UsageError(
      'name cannot be provided when a selector is specified (-l): give names or a selector',
    );
  }
  if (names.length > 0) {
    if (namespace === undefined) {
      const all = (await client.list(r.kind, {})).items as KubeObject[];
      return names.flatMap((n) => all.filter((o) => o.metadata.name === n));
    }
    const out: KubeObject[] = [];
    for (const name of names) out.push((await client.get(r.kind, { namespace, name })) as KubeObject);
    return out;
  }
  const items = (
    await client.list(r.kind, {
      ...(namespace !== undefined ? { namespace } : {}),
      ...(selector ? { labelSelector: selector } : {}),
    })
  ).items as KubeObject[];
  return items.sort(
    (a, b) =>
      (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
}

export function render(
  r: ResourceInfo,
  objs: KubeObject[],
  format: OutputFormat,
  opts: { allNamespaces: boolean; single: boolean; now: number },
): string {
  switch (format) {
    case 'json':
    case 'yaml': {
      const doc =
        opts.single && objs.length === 1 ? objs[0] : { apiVersion: 'v1', kind: 'List', items: objs };
      return format === 'json' ? JSON.stringify(doc, null, 2) : toYaml(doc).trimEnd();
    }
    case 'name':
      return objs.map((o) => `${r.singular}.claimkit.dev/${o.metadata.name}`).join('\n');
    case 'table':
    case 'wide': {
      const cols = r.columns.filter((c) => format === 'wide' || !c.wide);
      const headers = [...(opts.allNamespaces ? ['NAMESPACE'] : []), 'NAME', ...cols.map((c) => c.header)];
      const rows = objs.map((o) => [
        ...(opts.allNamespaces ? [o.metadata.namespace ?? ''] : []),
        o.metadata.name,
        ...cols.map((c) => c.value(o as never, opts.now)),
      ]);
      return table(headers, rows);
    }
  }
}

export async function runGet(ctx: Ctx, argv: string[]): Promise<number> {
  const line = parseCommand(GET_OPTIONS, argv);
  if (!line) return showHelp(ctx, GET_HELP);
  const { values: v, positionals } = line;
  if (positionals.length === 0)
    throw new UsageError(
      'you must specify the type of resource to get (captures, podpools, podclaims, podclaimsets)',
    );
  const r = resolveResource(positionals[0]!);
  const names = positionals.slice(1);
  const format = v.output;
  const conn = await connect(ctx, v);
  const namespace = namespaceOf(v, conn);
  const objs = await fetchObjects(conn.client, r, names, namespace, v.selector);
  if (objs.length === 0 && (format === 'table' || format === 'wide')) {
    ctx.err(namespace === undefined ? 'No resources found' : `No resources found in ${namespace} namespace.`);
    return 0;
  }
  const text = render(r, objs as AnyObject[], format, {
    allNamespaces: namespace === undefined,
    single: names.length === 1,
    now: ctx.now(),
  });
  if (text !== '') ctx.out(text);
  return 0;
}
