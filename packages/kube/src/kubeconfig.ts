// Loading a kubeconfig the way kubectl does (--kubeconfig, else $KUBECONFIG, else ~/.kube/config,
// else in-cluster), with errors a user can act on.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { KubeConfig as ClientNodeKubeConfig } from '@kubernetes/client-node';
import { slimClientNode } from './client-node-slim.ts';

// KubeConfig from its own module, not client-node's index (which loads every generated API), and
// on Node without the generated API's index either (client-node-slim.ts).
slimClientNode();
const configModule: { KubeConfig: typeof ClientNodeKubeConfig } = await import(
  '@kubernetes/client-node/dist/config.js'
);

/** client-node's KubeConfig, so that no other package imports client-node for the type. */
export const KubeConfig = configModule.KubeConfig;
export type KubeConfig = ClientNodeKubeConfig;

export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

export interface LoadKubeConfigOptions {
  /** A kubeconfig file; default $KUBECONFIG, then ~/.kube/config, then the in-cluster config. */
  kubeconfig?: string;
  /** A context other than the file's current-context. */
  context?: string;
  /** For tests. */
  env?: Record<string, string | undefined>;
  home?: string;
}

function loadFile(kc: KubeConfig, path: string): void {
  if (!existsSync(path)) throw new KubeConfigError(`kubeconfig ${path}: no such file`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new KubeConfigError(`kubeconfig ${path}: cannot read: ${(e as Error).message}`);
  }
  try {
    kc.loadFromString(text);
  } catch (e) {
    const msg = (e as Error).message.split('\n')[0];
    throw new KubeConfigError(`kubeconfig ${path}: not a valid kubeconfig (${msg})`);
  }
}

/** Loads a kubeconfig and selects the context; throws KubeConfigError with a readable message. */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const env = opts.env ?? process.env;
  const kc = new KubeConfig();
  let source: string;
  if (opts.kubeconfig) {
    loadFile(kc, opts.kubeconfig);
    source = opts.kubeconfig;
  } else if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(delimiter).filter((f) => f !== '');
    const present = files.filter((f) => existsSync(f));
    if (present.length === 0)
      throw new KubeConfigError(`KUBECONFIG=${env.KUBECONFIG}: none of these files exists`);
    loadFile(kc, present[0]!);
    for (const f of present.slice(1)) {
      const more = new KubeConfig();
      loadFile(more, f);
      kc.mergeConfig(more);
    }
    source = `KUBECONFIG=${env.KUBECONFIG}`;
  } else {
    const def = join(opts.home ?? homedir(), '.kube', 'config');
    if (existsSync(def)) {
      loadFile(kc, def);
      source = def;
    } else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
      try {
        kc.loadFromCluster();
      } catch (e) {
        throw new KubeConfigError(`in-cluster config: ${(e as Error).message}`);
      }
      return kc;
    } else {
      throw new KubeConfigError(
        `no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ${def} (or run in a cluster)`,
      );
    }
  }
  const names = kc.getContexts().map((c) => c.name);
  const available = names.length ? ` (available: ${names.join(', ')})` : ' (it defines no contexts)';
  if (opts.context) {
    if (!names.includes(opts.context))
      throw new KubeConfigError(`${source}: no context "${opts.context}"${available}`);
    kc.setCurrentContext(opts.context);
  } else if (!kc.getCurrentContext()) {
    throw new KubeConfigError(`${source}: no current context; pass --context${available}`);
  } else if (!names.includes(kc.getCurrentContext())) {
    throw new KubeConfigError(
      `${source}: current-context "${kc.getCurrentContext()}" is not defined${available}`,
    );
  }
  const ctx = kc.getContextObject(kc.getCurrentContext());
  if (!ctx?.cluster || !kc.getCluster(ctx.cluster)) {
    throw new KubeConfigError(
      `${source}: context "${kc.getCurrentContext()}" names cluster "${ctx?.cluster ?? ''}", which is not defined`,
    );
  }
  return kc;
}
