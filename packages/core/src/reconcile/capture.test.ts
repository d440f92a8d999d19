// The Capture reconciler with a controller-driven backend: job started once per token, its id
// persisted so a restarted controller resumes polling, fenced terminal writes, attempts, timeouts.
import { describe, expect, test } from 'vitest';
import { ApiModel } from '../model/api-model.ts';
import { ManualClock } from '../model/clock.ts';
import { schemaModelOptions } from '../schema/index.ts';
import { SimCaptureAgent } from '../sim/capture-agent.ts';
import {
  capture,
  onNode,
  pod,
  ready,
  T0_MS,
  withBackend,
  withLabels,
  withMaxAttempts,
  withSelector,
  withTimeout,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { reconcileCapture } from './capture.ts';

const key = { namespace: 'default', name: 'snap' };

async function setup(...mods: Parameters<typeof capture>[1][]) {
  const clock = new ManualClock(T0_MS);
  const model = new ApiModel({ ...schemaModelOptions(), clock });
  const agent = new SimCaptureAgent(() => clock.now());
  const deps = { client: model, cache: model, now: () => clock.now(), backend: agent };
  await put(model, pod('w-0', withLabels({ app: 'w' }), onNode('n1'), ready()));
  await put(
    model,
    capture(
      'snap',
      withSelector({ matchLabels: { app: 'w' } }),
      withBackend('Http', 'http://{nodeName}:8750/v1/captures'),
      ...mods,
    ),
  );
  return { clock, model, agent, deps };
}

describe('Http backend', () => {
  test('acquire, start one job, poll, and complete with the producing token', async () => {
    const { model, agent, deps, clock } = await setup();
    await reconcileCapture(deps, key); // acquire
    expect(model.getNow('Capture', key).status?.claim).toMatchObject({ holder: { name: 'w-0' }, token: 1 });
    await reconcileCapture(deps, key); // start the job, record its id
    const job = model.getNow('Capture', key).status?.claim?.job;
    expect(job?.id).toMatch(/^job-/);
    const r = await reconcileCapture(deps, key); // poll: still running
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    clock.advance(5000);
    await reconcileCapture(deps, key);
    const done = model.getNow('Capture', key);
    expect(done.status).toMatchObject({
      phase: 'Captured',
      result: { token: 1, ref: 'snapshot://snap/1', capturedFrom: { name: 'w-0' } },
    });
    expect(done.status?.claim).toBeUndefined();
    expect(agent.accepted.get('default/snap')).toEqual([1]);
    expect(done.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      observedGeneration: 1,
    });
  });

  test('a restarted controller resumes polling the recorded job instead of starting another', async () => {
    const { model, agent, deps, clock } = await setup();
    await reconcileCapture(deps, key);
    await reconcileCapture(deps, key);
    const id = model.getNow('Capture', key).status?.claim?.job?.id;
    // A new controller process: no memory, same cluster, same agent.
    const restarted = { client: model, cache: model, now: () => clock.now(), backend: agent };
    clock.advance(5000);
    await reconcileCapture(restarted, key);
    expect(model.getNow('Capture', key).status?.result?.ref).toBe('snapshot://snap/1');
    expect(agent.accepted.get('default/snap')).toEqual([1]);
    expect(id).toBeDefined();
  });

  test('failed attempts close the claim; after maxAttempts the capture is Failed', async () => {
    const { model, agent, deps, clock } = await setup(withMaxAttempts(2));
    agent.nextFate = 'fail';
    for (let i = 0; i < 12 && model.getNow('Capture', key).status?.phase !== 'Failed'; i++) {
      await reconcileCapture(deps, key);
      clock.advance(4000);
    }
    const c = model.getNow('Capture', key);
    expect(c.status).toMatchObject({ phase: 'Failed', attempts: 2, epoch: 2 });
    expect(agent.accepted.get('default/snap')).toEqual([1, 2]);
  });

  test('a hanging job times out after timeoutSeconds while its lease is kept fresh', async () => {
    const { model, agent, deps, clock } = await setup(withTimeout(30), withMaxAttempts(1));
    agent.nextFate = 'hang';
    await reconcileCapture(deps, key);
    await reconcileCapture(deps, key);
    const renew0 = model.getNow('Capture', key).status?.claim?.renewTime;
    clock.advance(25_000);
    await reconcileCapture(deps, key);
    expect(model.getNow('Capture', key).status?.claim?.renewTime).not.toBe(renew0);
    clock.advance(10_000);
    await reconcileCapture(deps, key);
    expect(model.getNow('Capture', key).status).toMatchObject({
      phase: 'Failed',
      lastError: 'timed out after 30s',
    });
  });

  test('an unreachable agent is retried without touching the claim', async () => {
    const { model, agent, deps } = await setup();
    await reconcileCapture(deps, key);
    agent.down = true;
    await expect(reconcileCapture(deps, key)).rejects.toMatchObject({ reason: 'Unavailable' });
    expect(model.getNow('Capture', key).status?.claim?.job).toBeUndefined();
    agent.down = false;
    await reconcileCapture(deps, key);
    expect(model.getNow('Capture', key).status?.claim?.job?.id).toBeDefined();
  });
});
