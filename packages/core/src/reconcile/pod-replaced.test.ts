// A pod deleted and created again under the same name is not the claim's pod: `kubectl replace
// --force` on a Bound pool pod (delete, then create from the same YAML, claimed-by label and its
// uid included), or a person's delete + create of an Idle pod of that name. The claim knew its pod
// by name only, so it kept the new pod as its own: a silent rebind, which lostPolicy Fail promises
// never to make. The bind now records the pod's UID on the claim; another UID is a lost pod.
import { describe, expect, test } from 'vitest';
import { ANNOTATION_POD_UID, LABEL_CLAIMED_BY, LABEL_STATE } from '../api/constants.ts';
import type { Pod, PodClaim } from '../api/types.ts';
import { checkConvergence } from '../invariants/check.ts';
import type { ApiModel } from '../model/api-model.ts';
import { inPool, onNode, pod, podClaim, podPool, ready, withState } from '../testing/fixtures.ts';
import { putAll } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { reconcilePodClaim } from './podclaim/index.ts';
import { reconcilePodPool } from './podpool/index.ts';

const NS = 'default';
const key = (name: string) => ({ namespace: NS, name });

async function boundWorld(lostPolicy: 'Rebind' | 'Fail') {
  const { clock, model, events, deps, tracker } = world();
  await putAll(
    model,
    podPool('web', (p) => {
      p.spec.minIdle = 0;
      p.spec.maxPods = 4;
    }),
    pod('pod-x', inPool('web'), withState('Idle'), onNode('n1'), ready()),
    podClaim('app', (c) => {
      c.spec.poolName = 'web';
      c.spec.lostPolicy = lostPolicy;
    }),
  );
  const settle = async (n = 6) => {
    for (let i = 0; i < n; i++) {
      await reconcilePodClaim(deps, key('app'));
      await reconcilePodPool(deps, key('web'));
      clock.advance(1000);
    }
  };
  await settle();
  const claim = model.getNow('PodClaim', key('app'));
  const x = model.getNow('Pod', key('pod-x'));
  expect(claim.status?.podName).toBe('pod-x');
  expect(claim.status?.podUID).toBe(x.metadata.uid);
  expect(claim.metadata.annotations?.[ANNOTATION_POD_UID]).toBeUndefined();
  return { model, tracker, events, settle, x };
}

/** `kubectl replace --force`: delete the pod, then create it from what `kubectl get -o yaml` showed. */
async function replaceForce(model: ApiModel, old: Pod, edit: (p: Pod) => void = () => {}): Promise<Pod> {
  await model.delete('Pod', key(old.metadata.name));
  model.completePodDeletions();
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _ct,
    deletionTimestamp: _dt,
    ...metadata
  } = old.metadata;
  const next: Pod = { ...old, metadata: { ...metadata } };
  edit(next);
  await model.create(next);
  model.setPodStatusNow(key(old.metadata.name), {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True' }],
  });
  return model.getNow('Pod', key(old.metadata.name));
}

describe('a pod replaced under the same name', () => {
  test('kubectl replace --force of the Bound pod, lostPolicy Fail: the claim is Lost and stays Lost; the new pod goes back to the pool', async () => {
    const w = await boundWorld('Fail');
    const y = await replaceForce(w.model, w.model.getNow('Pod', key('pod-x')));
    expect(y.metadata.uid).not.toBe(w.x.metadata.uid);
    expect(y.metadata.labels?.[LABEL_CLAIMED_BY]).toBe('app'); // the copied label
    await w.settle();
    const claim = w.model.getNow('PodClaim', key('app'));
    expect(claim.status?.podName ?? '').toBe('');
    expect(claim.status?.phase).toBe('Lost');
    expect(claim.status?.podUID).toBeUndefined();
    expect(w.events.some((e) => e.reason === 'Lost' && e.message.includes('was replaced'))).toBe(true);
    const after = w.model.getNow('Pod', key('pod-x'));
    expect(after.metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    expect(w.tracker.violations).toEqual([]);
    const state = {
      captures: [],
      pods: w.model.listNow('Pod', { namespace: NS }),
      claims: w.model.listNow('PodClaim', { namespace: NS }),
    };
    expect(checkConvergence(state, w.model.clock.now())).toEqual([]);
  });

  test('kubectl replace --force, lostPolicy Rebind: Lost (with an Event), then bound again with the new UID recorded', async () => {
    const w = await boundWorld('Rebind');
    const y = await replaceForce(w.model, w.model.getNow('Pod', key('pod-x')));
    await w.settle();
    const claim = w.model.getNow('PodClaim', key('app')) as PodClaim;
    expect(w.events.some((e) => e.reason === 'Lost' && e.message.includes('was replaced'))).toBe(true);
    expect(claim.status?.phase).toBe('Bound');
    const bound = w.model.getNow('Pod', key(claim.status!.podName!));
    expect(claim.status?.podUID).toBe(bound.metadata.uid);
    expect(bound.metadata.uid).not.toBe(w.x.metadata.uid);
    expect([y.metadata.uid]).toContain(bound.metadata.uid);
    expect(w.tracker.violations).toEqual([]);
  });

  test("an Idle pod created under the name of the deleted Bound pod is not taken as the claim's pod", async () => {
    const w = await boundWorld('Fail');
    await replaceForce(w.model, w.model.getNow('Pod', key('pod-x')), (p) => {
      p.metadata.labels = { ...p.metadata.labels, [LABEL_STATE]: 'Idle' };
      delete p.metadata.labels[LABEL_CLAIMED_BY];
      p.metadata.annotations = {};
    });
    await w.settle();
    const claim = w.model.getNow('PodClaim', key('app'));
    expect(claim.status?.podName ?? '').toBe('');
    expect(claim.status?.phase).toBe('Lost');
    expect(w.model.getNow('Pod', key('pod-x')).metadata.labels?.[LABEL_CLAIMED_BY]).toBeUndefined();
    expect(w.tracker.violations).toEqual([]);
  });
});
