// What `npm start` prints once everything is up: how to point kubectl at the cluster and commands
// to try, every one of which works from a checkout without a build (claimctl runs from its sources
// through the root `claimctl` script).
import { ANNOTATION_MIGRATE, LABEL_CLAIMED_BY, LABEL_STATE } from '@claimkit/core';

export interface BannerInfo {
  seconds: number;
  server: string;
  agentUrl: string;
  /** Admin kubeconfig (the printed KUBECONFIG). */
  kubeconfig: string;
  userKubeconfig: string;
  userName: string;
  /** host:port of the controller's metrics. */
  metrics: string;
  controllerUser: string;
}

export function banner(i: BannerInfo): string {
  const claim = `"$(kubectl get podclaims -o jsonpath='{.items[0].metadata.name}')"`;
  const claimedPod = `"$(kubectl get podclaims -o jsonpath='{.items[0].status.podName}')"`;
  return `
claimkit is ready (${i.seconds.toFixed(1)} s): control plane ${i.server}, CRDs, admission policies, controller and webhook (each as its ServiceAccount), capture agent ${i.agentUrl}

export KUBECONFIG=${i.kubeconfig}

  kubectl get podpools,podclaimsets,podclaims,captures
  kubectl get pods -L ${LABEL_STATE},${LABEL_CLAIMED_BY}
  kubectl scale podclaimset/web-claims --replicas=3
  kubectl delete pod ${claimedPod}   # the claim goes Lost and binds again
  kubectl annotate podclaim ${claim} ${ANNOTATION_MIGRATE}=try
  kubectl get capture web-snapshot -o yaml      # delete its holder pod mid-capture: taken over at once
  npm run -s claimctl -- doctor -A              # claimctl from the sources, no build
  curl -s http://${i.metrics}/metrics | grep ^claimkit_
  kubectl get events --field-selector source=claimkit-controller

Refused for this admin as for anyone but the controller (${i.controllerUser}):
  kubectl patch podclaim ${claim} --type=merge -p '{"spec":{"podName":"another-pod"}}'
  kubectl label pod ${claimedPod} ${LABEL_CLAIMED_BY}=another-claim --overwrite

(the non-admin identity ${i.userName}: --kubeconfig ${i.userKubeconfig}; logs: CLAIMKIT_LOG_LEVEL=info npm start)
Ctrl-C stops everything.
`;
}
