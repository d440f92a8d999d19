// The real cluster, through @claimkit/kube (client-node). Imported lazily: only commands that talk
// to a cluster pay for loading the Kubernetes client.
import { createKubeClient, KubeEventRecorder, loadKubeConfig } from '@claimkit/kube';
import { VERSION } from './cli.ts';
import { type Connection, type ConnectOptions, DEFAULT_NAMESPACE } from './context.ts';

export async function connectCluster(opts: ConnectOptions): Promise<Connection> {
  const kc = loadKubeConfig({
    ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}),
    ...(opts.context ? { context: opts.context } : {}),
  });
  const current = kc.getContextObject(kc.getCurrentContext());
  const client = createKubeClient(kc, {
    userAgent: `claimctl/${VERSION}`,
    ...(opts.as ? { impersonate: { user: opts.as, ...(opts.asGroup ? { group: opts.asGroup } : {}) } } : {}),
  });
  return {
    client,
    namespace: current?.namespace || DEFAULT_NAMESPACE,
    recorder: new KubeEventRecorder(client, { component: 'claimctl' }),
  };
}
