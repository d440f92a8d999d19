// Shared by the cluster commands: cluster flags and the namespace they resolve to.
import { type FlagSpecs, type Parsed, str, UsageError } from '../args.ts';
import type { Connection, Ctx } from '../context.ts';

export const NAMESPACED: FlagSpecs = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { short: 'n', type: 'string' },
  'all-namespaces': { short: 'A', type: 'boolean' },
};

export const CLUSTER_HELP = `Cluster flags:
      --kubeconfig PATH     kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
      --context NAME        kubeconfig context (default: the current context)
  -n, --namespace NS        namespace (default: the context's namespace, else "default")`;

export const ALL_NAMESPACES_HELP = '  -A, --all-namespaces      every namespace';

export async function connect(ctx: Ctx, p: Parsed): Promise<Connection> {
  const kubeconfig = str(p, 'kubeconfig');
  const context = str(p, 'context');
  return ctx.connect({ ...(kubeconfig ? { kubeconfig } : {}), ...(context ? { context } : {}) });
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
