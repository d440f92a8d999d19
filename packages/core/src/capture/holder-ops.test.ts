// acquireCapture only for a candidate: the pod exists with that UID, is not being deleted, matches
// spec.selector and is Ready — the same rule the controller applies to the holders it picks.
import { describe, expect, test } from 'vitest';
import { ApiError } from '../api/errors.ts';
import type { Pod } from '../api/types.ts';
import { capture, pod, ready, running } from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world as harness } from '../testing/world.ts';
import { acquireCapture } from './holder-ops.ts';

const key = { namespace: 'default', name: 'snap' };

async function world() {
  const { model, clock } = harness();
  await put(model, capture('snap'));
  const label = (p: Pod) => {
    p.metadata.labels = { ...p.metadata.labels, app: 'snap' };
  };
  const readyPod = await put(model, pod('w-ready', label, ready()));
  const notReady = await put(model, pod('w-starting', label, running()));
  const other = await put(model, pod('w-other', ready()));
  return { model, clock, readyPod, notReady, other };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).reason).toBe('BadRequest');
    return (e as ApiError).message;
  }
  throw new Error('expected acquireCapture to refuse');
}

describe('acquireCapture', () => {
  test('a Ready pod matching the selector acquires', async () => {
    const { model, clock, readyPod } = await world();
    const got = await acquireCapture(model, key, { name: 'w-ready', uid: readyPod.metadata.uid! }, () =>
      clock.now(),
    );
    expect(got.outcome.kind).toBe('acquired');
    expect(model.getNow('Capture', key).status?.claim?.holder).toEqual({
      name: 'w-ready',
      uid: readyPod.metadata.uid,
    });
  });

  test('refuses every pod that is not a candidate, saying why, and writes nothing', async () => {
    const { model, clock, readyPod, notReady, other } = await world();
    const now = () => clock.now();
    const before = model.getNow('Capture', key).metadata.resourceVersion;
    expect(await refusal(acquireCapture(model, key, { name: 'w-gone', uid: 'u' }, now))).toBe(
      'pod w-gone may not hold capture snap: it does not exist',
    );
    expect(await refusal(acquireCapture(model, key, { name: 'w-ready', uid: 'old-uid' }, now))).toMatch(
      /its UID is .*, not old-uid \(a pod recreated under the same name is another pod\)$/,
    );
    expect(
      await refusal(acquireCapture(model, key, { name: 'w-starting', uid: notReady.metadata.uid! }, now)),
    ).toMatch(/it is not Ready$/);
    expect(
      await refusal(acquireCapture(model, key, { name: 'w-other', uid: other.metadata.uid! }, now)),
    ).toMatch(/it does not match spec.selector$/);
    await model.patch(
      'Pod',
      { namespace: 'default', name: 'w-ready' },
      { metadata: { finalizers: ['x/y'] } },
    );
    await model.delete('Pod', { namespace: 'default', name: 'w-ready' });
    expect(
      await refusal(acquireCapture(model, key, { name: 'w-ready', uid: readyPod.metadata.uid! }, now)),
    ).toMatch(/it is being deleted$/);
    expect(model.getNow('Capture', key).metadata.resourceVersion).toBe(before);
  });
});
