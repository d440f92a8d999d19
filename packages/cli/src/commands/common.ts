// Shared by the commands: the table fragments several commands' tables are made of, their flag
// help, and the cluster and namespace the cluster flags resolve to.
import { defineOptions, type OptionTable, type OptionValues, optionLines } from '@claimkit/core/options';
import { UsageError } from '../args.ts';
import { type Connection, type Ctx, DEFAULT_NAMESPACE } from '../context.ts';
import { asProgram } from '../program.ts';

/** The flags every cluster command takes (kubectl's names). */
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
    defaultText: `the context's namespace, else "${DEFAULT_NAMESPACE}"`,
    help: 'namespace',
  },
});

/** The cluster flags and -A, for the commands that can act in every namespace. */
export const NAMESPACED_OPTIONS = defineOptions({
  ...CLUSTER_OPTIONS,
  'all-namespaces': { type: 'bool', short: 'A', help: 'every namespace' },
});

export const SELECTOR_OPTIONS = defineOptions({
  selector: { type: 'string', short: 'l', arg: 'SELECTOR', help: 'label selector (a=b,c!=d,e in (f,g),!h)' },
});

/** -o of the commands that print either text or JSON. */
export const TEXT_OR_JSON_OPTIONS = defineOptions({
  output: { type: 'enum', short: 'o', values: ['text', 'json'], default: 'text', help: 'output format' },
});

// Where every command's flag descriptions start, so its own and the cluster flags line up.
const HELP_COLUMN = 26;

/** A command's flag help, generated from its table: its own flags, then the cluster flags it takes. */
export function flagsHelp(table: OptionTable): string {
  const part = (cluster: boolean) =>
    Object.fromEntries(Object.entries(table).filter(([name]) => name in CLUSTER_OPTIONS === cluster));
  const cluster = part(true);
  return [
    'Flags:',
    optionLines(part(false), { col: HELP_COLUMN }),
    ...(Object.keys(cluster).length > 0
      ? ['Cluster flags:', optionLines(cluster, { col: HELP_COLUMN })]
      : []),
  ].join('\n');
}

/** Prints a command's help (naming the program as the user ran it); returns the exit code. */
export function showHelp(ctx: Ctx, help: string, code = 0): number {
  ctx.out(asProgram(help, ctx.prog));
  return code;
}

export async function connect(ctx: Ctx, v: OptionValues<typeof CLUSTER_OPTIONS>): Promise<Connection> {
  const { kubeconfig, context, as, 'as-group': asGroup } = v;
  if (as === '') throw new UsageError('--as must not be empty');
  if (asGroup !== undefined && !as) throw new UsageError('--as-group needs --as');
  return ctx.connect({
    ...(kubeconfig ? { kubeconfig } : {}),
    ...(context ? { context } : {}),
    ...(as ? { as } : {}),
    ...(asGroup ? { asGroup } : {}),
  });
}

/** The namespace to act in: -n's, else the context's; undefined for -A. */
export function namespaceOf(
  v: { namespace?: string | undefined; 'all-namespaces'?: boolean },
  conn: Connection,
): string | undefined {
  const all = v['all-namespaces'] === true;
  if (all && v.namespace)
    throw new UsageError('-n/--namespace and -A/--all-namespaces cannot be used together');
  if (all) return undefined;
  if (v.namespace === '') throw new UsageError('-n/--namespace must not be empty');
  return v.namespace ?? conn.namespace;
}

export function expectPositionals(positionals: string[], min: number, max: number, usage: string): string[] {
  if (positionals.length < min) throw new UsageError(`missing argument: usage: ${usage}`);
  if (positionals.length > max) {
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[max])}: usage: ${usage}`);
  }
  return positionals;
}
