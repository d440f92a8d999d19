// Shared by the cluster commands: cluster flags and the namespace they resolve to.
import { type FlagSpecs, type Parsed, str, UsageError } from '../args.ts';
import type { Connection, Ctx } from '../context.ts';

export const NAMESPACED: FlagSpecs = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  as: { type: 'string' },
  'as-group': { type: 'string' },
  namespace: { short: 'n', type: 'string' },
  'all-namespaces': { short: 'A', type: 'boolean' },
};

export const CLUSTER_HELP = `Cluster flags:
      --kubeconfig PATH     kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
      --context NAME        kubeconfig context (default: the current context)
      --as USER             act as USER (impersonation, e.g. the controller's ServiceAccount
                            system:serviceaccount:claimkit-system:claimkit-controller, whose
                            writes the webhook accepts for doctor --fix)
      --as-group GROUP      act with GROUP too (one group; needs --as)
  -n, --namespace NS        namespace (default: the context's namespace, else "default")`;

export const ALL_NAMESPACES_HELP = '  -A, --all-namespaces      every namespace';

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
