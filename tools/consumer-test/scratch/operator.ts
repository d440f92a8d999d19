// A small operator on @claimkit/core, as a user writes it from the published package: a pool, a
// ready idle pod and a claim in core's in-memory API model, one PodClaim reconcile that binds the
// claim, and DESIGN.md's invariant checks over the result. Prints one JSON line for the test.
import {
  type Client,
  LABEL_CLAIMED_BY,
  LABEL_POOL,
  LABEL_STATE,
  type Pod,
  type PodClaim,
  type PodPool,
  reconcilePodClaim,
} from '@claimkit/core';
import { ApiModel, ManualClock, schemaModelOptions } from '@claimkit/core/model';
import { checkConvergence, checkSafety } from '@claimkit/core/testing';

const ns = 'default';
const clock = new ManualClock(Date.UTC(2026, 0, 1));
const model = new ApiModel({ ...schemaModelOptions(), clock });

const pool: PodPool = {
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodPool',
  metadata: { namespace: ns, name: 'web' },
  spec: {
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'nginx' }] },
    },
    minIdle: 1,
    maxPods: 5,
    releasePolicy: 'Recycle',
    drainSeconds: 0,
  },
};
const pod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: ns, name: 'web-1', labels: { [LABEL_POOL]: 'web', [LABEL_STATE]: 'Idle' } },
  spec: { nodeName: 'node-1', containers: [{ name: 'main', image: 'nginx' }] },
};
const claim: PodClaim = {
  apiVersion: 'claimkit.dev/v1alpha1',
  kind: 'PodClaim',
  metadata: { namespace: ns, name: 'job-1' },
  spec: { poolName: 'web' },
};

await model.create(pool);
const created = await model.create(pod);
// The kubelet's part: the pod runs and is Ready (a status write, as on a real API server).
await model.updateStatus({
  ...created,
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});
await model.create(claim);

const deps = { client: model as Client, cache: model, now: () => clock.now() };
for (let i = 0; i < 10; i++) {
  const r = await reconcilePodClaim(deps, { namespace: ns, name: 'job-1' });
  if (r.requeueAfterMs !== 0) break;
}

const bound = model.getNow('PodClaim', { namespace: ns, name: 'job-1' });
const boundPod = model.getNow('Pod', { namespace: ns, name: 'web-1' });
const state = { captures: [], pods: model.listNow('Pod'), claims: model.listNow('PodClaim') };
console.log(
  JSON.stringify({
    phase: bound.status?.phase,
    podName: bound.status?.podName,
    claimedBy: boundPod.metadata.labels?.[LABEL_CLAIMED_BY],
    violations: [...checkSafety(state), ...checkConvergence(state, clock.now())].map((v) => v.invariant),
  }),
);
