// Shared by the cluster commands: cluster flags and the namespace they resolve to.
import { defineOptions, type OptionTable, optionLines } from '@claimkit/core/options';
import { type FlagSpecs, type Parsed, str, UsageError } from '../args.ts';
import type { Connection, Ctx } from '../context.ts';

/** The flags every cluster command takes (kubectl's names): one table for the parsing and the help. */
export const CLUSTER_OPTIONS = defineOptions({
  kubeconfig: {
    type: 'string',
    arg: 'PATH',
    defaultText: '$KUBECONFIG, then ~/.kube/config',
    help: 'kubeconfig file',
  },
  context: { type: 'string', arg: 'NAME', defaultText: 'the current context', help: 'kubeconfig context' },
  as: {
    type: 'string',
    arg: 'USER',
    help: "act as USER (impersonation, e.g. the controller's ServiceAccount system:serviceaccount:claimkit-system:claimkit-controller, whose writes the webhook accepts for doctor --fix)",
  },
  'as-group': { type: 'string', arg: 'GROUP', help: 'act with GROUP too (one group; needs --as)' },
  namespace: {
    type: 'string',
    short: 'n',
    arg: 'NS',
    defaultText: 'the context\'s namespace, else "default"',
    help: 'namespace',
  },
});

const ALL_NAMESPACES_OPTIONS = defineOptions({
  'all-namespaces': { type: 'bool', short: 'A', defaultText: 'off', help: 'every namespace' },
});

/** A table's flags as parseFlags takes them. */
export function flagSpecs(table: OptionTable): FlagSpecs {
  return Object.fromEntries(
    Object.entries(table).map(([name, o]) => [
      name,
      { type: o.type === 'bool' ? 'boolean' : 'string', ...(o.short ? { short: o.short } : {}) },
    ]),
  );
}

export const NAMESPACED: FlagSpecs = flagSpecs({ ...CLUSTER_OPTIONS, ...ALL_NAMESPACES_OPTIONS });

// Descriptions start at column 28, as in the commands' own flag lists.
export const CLUSTER_HELP = `Cluster flags:\n${optionLines(CLUSTER_OPTIONS, { col: 26 })}`;

export const ALL_NAMESPACES_HELP = optionLines(ALL_NAMESPACES_OPTIONS, { col: 26 });

export async function connect(ctx: Ctx, p: Parsed): Promise<Connection> {
  const kubeconfig = str(p, 'kubeconfig');
  const context = str(p, 'context');
  const as = str(p, 'as');
  const asGroup = str(p, 'as-group');
  if (as === '') throw new UsageError('--as must not be empty');
  if (asGroup !== undefined && !as) throw new UsageError('--as-group needs --as');
  return ctx.connect({
    ...(kubeconfig ? { kubeconfig } : {}),
    ...(context ? { context } : {}),
    ...(as ? { as } : {}),
    ...(asGroup ? { asGroup } : {}),
  });
}

/** The namespace to act in; undefined for -A. */
export function namespaceOf(p: Parsed, conn: Connection, allowAll: boolean): string | undefined {
  const all = p.flags['all-namespaces'] === true;
  const ns = str(p, 'namespace');
  if (all && !allowAll) throw new UsageError('-A/--all-namespaces is not supported by this command');
  if (all && ns) throw new UsageError('-n/--namespace and -A/--all-namespaces cannot be used together');
  if (all) return undefined;
  if (ns === '') throw new UsageError('-n/--namespace must not be empty');
  return ns ?? conn.namespace;
}

export function expectPositionals(p: Parsed, min: number, max: number, usage: string): string[] {
  if (p.positionals.length < min) throw new UsageError(`missing argument: usage: ${usage}`);
  if (p.positionals.length > max) {
    throw new UsageError(`unexpected argument ${JSON.stringify(p.positionals[max])}: usage: ${usage}`);
  }
  return p.positionals;
}
