// Each pool-pod write says what it does (api/decision.ts WriteIntent), so metrics count applied
// intents instead of guessing from a patch: a bind, a relabel of the pod a claim already holds, a
// release back to Idle or by deletion; drains, unlabels and scale-in deletes carry none.
import { describe, expect, it } from 'vitest';
import { ApiModel } from '../model/api-model.ts';
import { applyDecision } from '../reconcile/apply.ts';
import {
  claimedBy,
  forCreate,
  idle,
  inPool,
  pod,
  podClaim,
  ready,
  succeeded,
  withState,
} from '../testing/fixtures.ts';
import {
  bindPodWrite,
  deletePodAsReadWrite,
  drainPodWrite,
  labelOwnedPodWrite,
  releasePodWrite,
  unlabelPodWrite,
} from './pods.ts';

const claim = podClaim('c1');
const held = pod('p', inPool('web'), withState('Bound'), claimedBy(claim));

describe('write intents', () => {
  it('a bind, a relabel and each kind of release say so, with their pool', () => {
    expect(bindPodWrite(pod('p', inPool('web'), idle(), ready()), claim).intent).toEqual({
      act: 'bind',
      pool: 'web',
    });
    expect(labelOwnedPodWrite(held, claim).intent).toEqual({ act: 'relabel', pool: 'web' });
    expect(releasePodWrite(held, 'Recycle', 'r').intent).toEqual({
      act: 'release',
      pool: 'web',
      recycled: true,
    });
    const deleted = releasePodWrite(held, 'Delete', 'r');
    expect([deleted.op, deleted.intent]).toEqual([
      'delete',
      { act: 'release', pool: 'web', recycled: false },
    ]);
    // A finished pod never runs again: released by deletion whatever the policy.
    const finished = releasePodWrite(
      pod('p', inPool('web'), withState('Bound'), succeeded()),
      'Recycle',
      'r',
    );
    expect([finished.op, finished.intent]).toEqual([
      'delete',
      { act: 'release', pool: 'web', recycled: false },
    ]);
  });

  it('drains, unlabels and plain deletes carry no intent', () => {
    expect(drainPodWrite(held, 0).intent).toBeUndefined();
    expect(unlabelPodWrite(held, 'u').intent).toBeUndefined();
    expect(deletePodAsReadWrite(held, 'scale in').intent).toBeUndefined();
  });

  it('applyDecision tells a delete that removed the pod from one that found it gone', async () => {
    const model = new ApiModel();
    const created = await model.create(forCreate(pod('p', inPool('web'), withState('Bound'))));
    const release = releasePodWrite(created, 'Delete', 'r');
    const first = await applyDecision(model, { writes: [release], events: [] });
    expect([first.applied, first.alreadyGone]).toEqual([1, undefined]);
    const again = await applyDecision(model, { writes: [release], events: [] });
    expect([again.applied, again.alreadyGone]).toEqual([1, [0]]);
  });
});
