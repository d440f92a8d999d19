// The capture reconciler and a result that got past the fence (no webhook, no CEL rule): it is
// flagged once (ResultFenced=False, Ready not True, one Warning Event), never acted on as valid,
// and a later fenced completion clears the flag. Forced states go through a model without the
// Capture rules, as kubectl against a cluster without them would.
import { describe, expect, test } from 'vitest';
import type { Capture } from '../api/types.ts';
import {
  capture,
  captured,
  captureStatus,
  onNode,
  pod,
  ready,
  withBackend,
  withLabels,
  withSelector,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import {
  CONDITION_RESULT_FENCED,
  decideCapture,
  decideDiscardUnfencedResult,
  REASON_UNFENCED_RESULT,
  reconcileCapture,
} from './capture/index.ts';

const key = { namespace: 'default', name: 'fn-v1' };

async function setup(...mods: Parameters<typeof capture>[1][]) {
  const { clock, model, events, deps, agent } = world({ withoutRules: ['Capture'], backend: true });
  await put(model, pod('w-0', withLabels({ app: 'w' }), onNode('n1'), ready()));
  await put(model, capture('fn-v1', withSelector({ app: 'w' }), ...mods));
  return { clock, model, events, deps, agent };
}

const condition = (c: Capture, type: string) => c.status?.conditions?.find((x) => x.type === type);

describe('an unfenced result on a Capture', () => {
  test('Captured with result.token 1 at epoch 5: flagged once, phase and result kept, no write storm', async () => {
    const { model, events, deps, clock } = await setup(
      captureStatus({ epoch: 5 }),
      captured('snap://stale', { token: 1 }),
    );
    const writesBefore = model.writes.length;
    await reconcileCapture(deps, key);
    const c = model.getNow('Capture', key);
    expect(c.status).toMatchObject({
      phase: 'Captured',
      epoch: 5,
      result: { token: 1, ref: 'snap://stale' },
    });
    expect(condition(c, CONDITION_RESULT_FENCED)).toMatchObject({
      status: 'False',
      reason: REASON_UNFENCED_RESULT,
      message: expect.stringMatching(/result token 1 is older than epoch 5/),
      observedGeneration: 1,
    });
    // Not acted on as valid: Ready does not say True for it.
    expect(condition(c, 'Ready')).toMatchObject({ status: 'False', reason: REASON_UNFENCED_RESULT });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: REASON_UNFENCED_RESULT,
        regarding: expect.objectContaining({ kind: 'Capture', name: 'fn-v1' }),
      }),
    ]);
    expect(model.writes.length).toBe(writesBefore + 1);
    for (let i = 0; i < 5; i++) {
      clock.advance(10_000);
      await reconcileCapture(deps, key);
    }
    expect(model.writes.length).toBe(writesBefore + 1);
    expect(events).toHaveLength(1);
  });

  test('a fenced result gets no ResultFenced condition and costs no write', async () => {
    const { model, events, deps } = await setup(captureStatus({ epoch: 5 }), captured('snap://ok'));
    const c0 = model.getNow('Capture', key);
    // Bring observedGeneration and Ready up to date first (what any first pass does).
    await reconcileCapture(deps, key);
    const writes = model.writes.length;
    await reconcileCapture(deps, key);
    expect(model.writes.length).toBe(writes);
    const c = model.getNow('Capture', key);
    expect(condition(c, CONDITION_RESULT_FENCED)).toBeUndefined();
    expect(c.status?.result).toEqual(c0.status?.result);
    expect(events).toEqual([]);
  });

  test('Http: a stale result beside the running claim is flagged with the acquisition; the fenced completion clears it', async () => {
    const { model, events, deps, clock } = await setup(
      withBackend('Http', 'http://{nodeName}:8750/v1/captures'),
      captured('snap://old', { token: 1 }),
      // A writer set the phase back without removing the result, then the epoch moved on.
      captureStatus({ epoch: 2, phase: 'Pending' }),
    );
    await reconcileCapture(deps, key); // acquires with token 3, keeping the result it found
    let c = model.getNow('Capture', key);
    expect(c.status).toMatchObject({ phase: 'Capturing', claim: { token: 3 }, result: { token: 1 } });
    expect(condition(c, CONDITION_RESULT_FENCED)?.status).toBe('False');
    expect(events.map((e) => e.reason)).toEqual(['Acquired', REASON_UNFENCED_RESULT]);
    for (let i = 0; i < 6 && c.status?.phase !== 'Captured'; i++) {
      clock.advance(2000);
      await reconcileCapture(deps, key);
      c = model.getNow('Capture', key);
    }
    expect(c.status).toMatchObject({ phase: 'Captured', epoch: 3, result: { token: 3 } });
    expect(condition(c, CONDITION_RESULT_FENCED)).toMatchObject({
      status: 'True',
      message: "result token 3 is the latest claim's",
    });
    expect(condition(c, 'Ready')?.status).toBe('True');
    expect(events.filter((e) => e.reason === REASON_UNFENCED_RESULT)).toHaveLength(1);
  });

  test('discarding keeps epoch, the claim and attempts, and is fenced on the resourceVersion read', async () => {
    const { model, clock } = await setup(
      captureStatus({ epoch: 5, attempts: 1 }),
      captured('snap://stale', { token: 1 }),
    );
    const read = model.getNow('Capture', key);
    const d = decideDiscardUnfencedResult(read, clock.now(), 'claimctl doctor');
    expect(d.writes).toHaveLength(1);
    const next = (d.writes[0] as { object: Capture }).object;
    expect(next.metadata.resourceVersion).toBe(read.metadata.resourceVersion);
    expect(next.status).toMatchObject({ phase: 'Pending', epoch: 5, attempts: 1 });
    expect(next.status?.result).toBeUndefined();
    expect(d.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ResultDiscarded' })]);
    // Nothing to discard on a fenced result.
    const fenced = { ...read, status: { ...read.status, result: { ...read.status!.result!, token: 5 } } };
    expect(decideDiscardUnfencedResult(fenced, clock.now(), 'x').writes).toEqual([]);
    // A decision from the read after someone else wrote: Conflict, nothing overwritten.
    await model.updateStatus({ ...read, status: { ...read.status, attempts: 2 } });
    await expect(model.updateStatus(next)).rejects.toMatchObject({ reason: 'Conflict' });
  });

  test('a deleting capture is left alone', async () => {
    const { model, clock } = await setup(captureStatus({ epoch: 5 }), captured('snap://stale', { token: 1 }));
    const c = model.getNow('Capture', key);
    const d = decideCapture({
      capture: { ...c, metadata: { ...c.metadata, deletionTimestamp: new Date(clock.now()).toISOString() } },
      pods: [],
      now: clock.now(),
    });
    expect(d).toEqual({ writes: [], events: [] });
  });
});
