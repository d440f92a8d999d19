// Writes every admission layer must refuse, sent as dry runs by a given identity: `npm start` uses
// them to know when the API server calls the webhook and enforces the policies.
import { API_VERSION, LABEL_POOL, LABEL_STATE } from '@claimkit/core';
import { apiMessage, type Clients } from '@claimkit/e2e/harness';

const NAMESPACE = 'default';

/** The API server's refusal message, or undefined when the write would have been accepted. */
async function refusal(write: Promise<unknown>): Promise<string | undefined> {
  try {
    await write;
    return undefined;
  } catch (e) {
    return apiMessage(e);
  }
}

/** A person creates a PodClaim with spec.podName set (only the controller may). */
export function podNameWrite(c: Clients): Promise<string | undefined> {
  const claim = {
    apiVersion: API_VERSION,
    kind: 'PodClaim',
    metadata: { name: 'claimkit-start-probe', namespace: NAMESPACE },
    spec: { poolName: 'web', podName: 'not-yours' },
  };
  return refusal(c.objects.create(claim, undefined, 'All'));
}

/** A pool pod whose state label is not a state. */
export function badStatePod(c: Clients): Promise<string | undefined> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'claimkit-start-probe',
      namespace: NAMESPACE,
      labels: { [LABEL_POOL]: 'web', [LABEL_STATE]: 'NoSuchState' },
    },
    spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
  };
  return refusal(c.objects.create(pod, undefined, 'All'));
}
