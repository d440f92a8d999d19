// A client on @claimkit/kube, as a user writes it from the published package: only type-checked
// (nothing here runs without a cluster). Its types reach @kubernetes/client-node's KubeConfig, whose
// own types import isomorphic-ws and so `ws`: with tsc's default skipLibCheck (false) those must
// type-check too.
import { createKubeClient, type KubeClient, loadKubeConfig } from '@claimkit/kube';

export function connect(kubeconfig?: string): KubeClient {
  const kc = loadKubeConfig(kubeconfig ? { kubeconfig } : {});
  return createKubeClient(kc, { timeoutMs: 10_000, userAgent: 'claimkit-consumer' });
}
