// The Capture reconciler with a controller-driven backend: job started once per token, its id
// persisted so a restarted controller resumes polling, fenced terminal writes, attempts, timeouts.
import { describe, expect, test } from 'vitest';
import type { EventSpec } from '../api/decision.ts';
import { ApiError } from '../api/errors.ts';
import type { Reader } from '../api/ports.ts';
import type { CaptureBackend, CaptureJobRequest } from '../capture/backend.ts';
import type { SimCaptureAgent } from '../model/capture-agent.ts';
import {
  capture,
  onNode,
  pod,
  ready,
  withBackend,
  withLabels,
  withMaxAttempts,
  withSelector,
  withTimeout,
} from '../testing/fixtures.ts';
import { put } from '../testing/model-helpers.ts';
import { world } from '../testing/world.ts';
import { CAPTURE_POLL_MS, reconcileCapture } from './capture/index.ts';

const key = { namespace: 'default', name: 'snap' };

async function setup(...mods: Parameters<typeof capture>[1][]) {
  const { clock, model, agent, deps: base } = world();
  const deps = { ...base, backend: agent };
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
});

/**
 * The simulated agent behind a start that fails its next `failures` times (counting every call):
 * 'refused' answers 403 (definite), 'unreachable' does not answer (transient).
 */
class FlakyStart implements CaptureBackend {
  starts = 0;
  failures: number;
  how: 'refused' | 'unreachable';
  readonly agent: SimCaptureAgent;
  constructor(agent: SimCaptureAgent, failures: number, how: 'refused' | 'unreachable') {
    this.agent = agent;
    this.failures = failures;
    this.how = how;
  }
  async start(url: string, req: CaptureJobRequest): Promise<{ id: string }> {
    this.starts++;
    if (this.failures > 0) {
      this.failures--;
      if (this.how === 'unreachable')
        throw new ApiError('Unavailable', `capture agent POST ${url}: connect ECONNREFUSED`);
      throw new ApiError('Forbidden', `capture agent POST ${url}: HTTP 403: checkpointing is not allowed`);
    }
    return this.agent.start(url, req);
  }
  poll: CaptureBackend['poll'] = (url, id) => this.agent.poll(url, id);
}

async function setupFlaky(
  failures: number,
  ...mods: Parameters<typeof capture>[1][]
): ReturnType<typeof setupFailing> {
  return setupFailing(failures, 'refused', ...mods);
}

async function setupFailing(
  failures: number,
  how: 'refused' | 'unreachable',
  ...mods: Parameters<typeof capture>[1][]
) {
  const base = await setup(...mods);
  const backend = new FlakyStart(base.agent, failures, how);
  const events: EventSpec[] = [];
  const deps = { ...base.deps, backend, recorder: { record: (e: EventSpec) => void events.push(e) } };
  return { ...base, backend, events, deps };
}

describe('a job that cannot be started', () => {
  test('a start the backend refuses is one failed attempt: attempts 1, lastError, CaptureFailed, claim closed', async () => {
    const { model, backend, deps, events } = await setupFlaky(1);
    await reconcileCapture(deps, key); // acquire
    const r = await reconcileCapture(deps, key); // start throws
    expect(backend.starts).toBe(1);
    expect(r.requeueAfterMs).toBe(0);
    const c = model.getNow('Capture', key);
    expect(c.status).toMatchObject({ phase: 'Pending', attempts: 1, epoch: 1 });
    expect(c.status?.claim).toBeUndefined();
    expect(c.status?.lastError).toMatch(/^job start failed: .*HTTP 403/);
    expect(events.filter((e) => e.reason === 'CaptureFailed')).toEqual([
      expect.objectContaining({
        type: 'Warning',
        message: expect.stringMatching(/^attempt 1 failed: job start failed/),
      }),
    ]);
    await reconcileCapture(deps, key); // the next attempt acquires with a new token
    expect(model.getNow('Capture', key).status?.claim).toMatchObject({ token: 2 });
  });

  test('after maxAttempts refused starts the capture is Failed and nothing is started again', async () => {
    const { model, backend, deps, events, clock } = await setupFlaky(Infinity, withMaxAttempts(3));
    for (let i = 0; i < 20; i++) {
      await reconcileCapture(deps, key);
      clock.advance(1000);
    }
    const c = model.getNow('Capture', key);
    expect(c.status).toMatchObject({ phase: 'Failed', attempts: 3, epoch: 3 });
    expect(c.status?.claim).toBeUndefined();
    expect(c.status?.lastError).toMatch(/HTTP 403/);
    expect(backend.starts).toBe(3);
    expect(events.filter((e) => e.reason === 'CaptureFailed')).toHaveLength(3);
  });

  test('a start refused once and then accepted records the job and completes normally', async () => {
    const { model, agent, backend, deps, clock } = await setupFlaky(1);
    for (let i = 0; i < 6; i++) {
      await reconcileCapture(deps, key);
      if (model.getNow('Capture', key).status?.claim?.job) break;
    }
    expect(model.getNow('Capture', key).status?.claim).toMatchObject({
      token: 2,
      job: { id: expect.stringMatching(/^job-/) },
    });
    clock.advance(5000);
    await reconcileCapture(deps, key);
    const c = model.getNow('Capture', key);
    expect(c.status).toMatchObject({
      phase: 'Captured',
      attempts: 1,
      result: { token: 2, ref: 'snapshot://snap/2' },
    });
    expect(c.status?.lastError).toBeUndefined();
    expect(backend.starts).toBe(2);
    expect(agent.accepted.get('default/snap')).toEqual([2]);
  });

  test('an unreachable agent spends no attempt: the start is retried with the same token until it answers', async () => {
    const { model, agent, backend, deps, events, clock } = await setupFailing(
      5,
      'unreachable',
      withTimeout(60),
    );
    await reconcileCapture(deps, key); // acquire
    for (let i = 0; i < 5; i++) {
      const r = await reconcileCapture(deps, key); // start: no answer
      expect(r.requeueAfterMs).toBe(CAPTURE_POLL_MS);
      clock.advance(CAPTURE_POLL_MS);
    }
    const waiting = model.getNow('Capture', key).status;
    expect(waiting?.attempts).toBeUndefined();
    expect(waiting?.claim).toMatchObject({ token: 1 });
    await reconcileCapture(deps, key); // the agent is back
    expect(model.getNow('Capture', key).status?.claim?.job?.id).toMatch(/^job-/);
    expect(backend.starts).toBe(6);
    expect(agent.accepted.get('default/snap')).toEqual([1]);
    expect(events.filter((e) => e.reason === 'CaptureFailed')).toEqual([]);
  });

  test('an agent unreachable for longer than timeoutSeconds costs one failed attempt', async () => {
    const { model, deps, events, clock } = await setupFailing(Infinity, 'unreachable', withTimeout(30));
    await reconcileCapture(deps, key); // acquire
    for (let t = 0; t <= 30_000; t += CAPTURE_POLL_MS) {
      await reconcileCapture(deps, key);
      clock.advance(CAPTURE_POLL_MS);
    }
    await reconcileCapture(deps, key);
    const c = model.getNow('Capture', key);
    expect(c.status?.attempts).toBe(1);
    expect(c.status?.lastError).toMatch(/^job start failed for 30s: .*ECONNREFUSED/);
    expect(events.filter((e) => e.reason === 'CaptureFailed')).toHaveLength(1);
  });

  test('a stale snapshot starts nothing: the fenced count of the start conflicts and the reconcile re-reads', async () => {
    const { model, backend, deps } = await setupFlaky(1);
    await reconcileCapture(deps, key); // acquire
    const stale = model.getNow('Capture', key);
    const cache = {
      get: async (kind: string, k: typeof key) => (kind === 'Capture' ? stale : model.get(kind as 'Pod', k)),
      list: model.list.bind(model),
    } as unknown as Reader;
    await model.updateStatus({ ...stale, status: { ...stale.status, lastError: 'someone else' } });
    const r = await reconcileCapture({ ...deps, cache }, key);
    expect(backend.starts).toBe(0);
    expect(r.requeueAfterMs).toBe(0);
    expect(model.getNow('Capture', key).status?.claim?.jobStarts).toBeUndefined();
  });

  test('a write landing during a failed start does not count the failure: the fenced write conflicts and the reconcile re-reads', async () => {
    const { model, backend, deps } = await setupFlaky(1);
    await reconcileCapture(deps, key); // acquire
    // Another writer bumps the resourceVersion while the backend is refusing the start.
    const start = backend.start.bind(backend);
    backend.start = async (url, req) => {
      const now = model.getNow('Capture', key);
      await model.updateStatus({ ...now, status: { ...now.status, lastError: 'someone else' } });
      return start(url, req);
    };
    const r = await reconcileCapture(deps, key);
    expect(backend.starts).toBe(1);
    expect(r.requeueAfterMs).toBe(0);
    const after = model.getNow('Capture', key).status;
    expect(after?.attempts).toBeUndefined();
    expect(after?.claim).toMatchObject({ token: 1, jobStarts: 1 });
  });

  test('a holder whose liveness stays unknown and has no job fails the attempt after timeoutSeconds', async () => {
    const { model, backend, deps, clock } = await setupFlaky(0, withTimeout(30), withMaxAttempts(1));
    await reconcileCapture(deps, key); // acquire
    model.faults.inject({ verbs: ['get'], kinds: ['Pod'], reason: 'Unavailable' });
    await reconcileCapture(deps, key); // holder unknown: claim kept, no start
    expect(model.getNow('Capture', key).status?.claim).toMatchObject({ token: 1 });
    expect(backend.starts).toBe(0);
    clock.advance(31_000); // within the lease (3000 s), past timeoutSeconds
    await reconcileCapture(deps, key);
    const c = model.getNow('Capture', key);
    expect(c.status).toMatchObject({ phase: 'Failed', attempts: 1, epoch: 1 });
    expect(c.status?.takeovers).toBeUndefined();
    expect(c.status?.lastError).toMatch(
      /^timed out after 30s without starting a job \(holder w-0: .*Unavailable/,
    );
    expect(backend.starts).toBe(0);
  });
});

describe('job starts that were never recorded, and jobs that finish after their claim moved on', () => {
  test("the job request carries the holder's node IP for {nodeIP} URLs, once the pod reports one", async () => {
    const { model, deps } = await setup();
    const p = model.getNow('Pod', { namespace: 'default', name: 'w-0' });
    await model.updateStatus({ ...p, status: { ...p.status, hostIP: '192.0.2.7' } });
    await reconcileCapture(deps, key); // acquire
    const seen: CaptureJobRequest[] = [];
    const agent = deps.backend;
    await reconcileCapture(
      {
        ...deps,
        backend: {
          start: async (url, req) => {
            seen.push(req);
            return agent.start(url, req);
          },
          poll: (url, id) => agent.poll(url, id),
        },
      },
      key,
    );
    expect(seen).toEqual([
      expect.objectContaining({ pod: 'w-0', node: 'n1', nodeIP: '192.0.2.7', token: 1 }),
    ]);
  });

  test('every start is counted on the claim before the backend is called; the recorded job keeps the count', async () => {
    const { model, deps } = await setup();
    await reconcileCapture(deps, key); // acquire
    let seen: number | undefined;
    const agent = deps.backend;
    const spy: CaptureBackend = {
      start: async (url, req) => {
        seen = model.getNow('Capture', key).status?.claim?.jobStarts;
        return agent.start(url, req);
      },
      poll: (url, id) => agent.poll(url, id),
    };
    await reconcileCapture({ ...deps, backend: spy }, key);
    expect(seen).toBe(1);
    expect(model.getNow('Capture', key).status?.claim).toMatchObject({
      jobStarts: 1,
      job: { id: expect.any(String) },
    });
  });

  test('a start counted but never recorded (the controller stopped mid-start) is started again and reported: JobRestarted, one result', async () => {
    const { model, agent, deps, clock } = await setup();
    const events: EventSpec[] = [];
    const recorder = { record: (e: EventSpec) => void events.push(e) };
    await reconcileCapture(deps, key); // acquire
    // The first controller counts its start, calls the backend and dies before recording the job.
    const dying: CaptureBackend = {
      start: async (url, req) => {
        await agent.start(url, req);
        throw new Error('controller SIGKILLed');
      },
      poll: (url, id) => agent.poll(url, id),
    };
    await expect(
      reconcileCapture({ ...deps, backend: dying, recorder: { record: () => {} } }, key),
    ).resolves.toBeDefined();
    // (A thrown non-API error is transient: the claim keeps its count, no job, no attempt spent.)
    expect(model.getNow('Capture', key).status?.claim).toMatchObject({ jobStarts: 1 });
    expect(model.getNow('Capture', key).status?.claim?.job).toBeUndefined();
    // The count's own write wakes the reconcile at once: no start again within CAPTURE_POLL_MS.
    const early = await reconcileCapture({ ...deps, recorder }, key);
    expect(early.requeueAfterMs).toBe(CAPTURE_POLL_MS);
    expect(events.filter((e) => e.reason === 'JobRestarted')).toEqual([]);
    clock.advance(CAPTURE_POLL_MS);
    await reconcileCapture({ ...deps, recorder }, key); // the next controller
    const restarted = events.filter((e) => e.reason === 'JobRestarted');
    expect(restarted).toHaveLength(1);
    expect(restarted[0]!.type).toBe('Warning');
    expect(restarted[0]!.message).toMatch(/start 2.*1 earlier start\(s\) were never recorded.*spare/);
    expect(model.getNow('Capture', key).status?.claim).toMatchObject({ jobStarts: 2, token: 1 });
    clock.advance(5000);
    await reconcileCapture({ ...deps, recorder }, key);
    const done = model.getNow('Capture', key).status;
    expect(done).toMatchObject({ phase: 'Captured', epoch: 1, result: { token: 1 } });
  });

  test('a job that finishes after a takeover is never recorded and is reported: JobSuperseded', async () => {
    const { model, agent, deps, clock } = await setup();
    await put(model, pod('w-1', withLabels({ app: 'w' }), onNode('n1'), ready()));
    const events: EventSpec[] = [];
    const recorder = { record: (e: EventSpec) => void events.push(e) };
    await reconcileCapture(deps, key); // acquire: w-0, token 1
    // While w-0's job starts, the sweep takes the claim over for w-1 (token 2).
    const slow: CaptureBackend = {
      start: async (url, req) => {
        const now = model.getNow('Capture', key);
        const { job: _j, ...claim } = now.status!.claim!;
        await model.updateStatus({
          ...now,
          status: {
            ...now.status,
            epoch: 2,
            takeovers: 1,
            claim: { ...claim, holder: { name: 'w-1', uid: 'uid-w-1' }, token: 2, jobStarts: 0 },
          },
        });
        return agent.start(url, req);
      },
      poll: (url, id) => agent.poll(url, id),
    };
    const r = await reconcileCapture({ ...deps, backend: slow, recorder }, key);
    expect(r.requeueAfterMs).toBe(0);
    const st = model.getNow('Capture', key).status!;
    expect(st.claim).toMatchObject({ token: 2 });
    expect(st.claim?.job).toBeUndefined();
    const superseded = events.filter((e) => e.reason === 'JobSuperseded');
    expect(superseded).toHaveLength(1);
    expect(superseded[0]!.message).toMatch(/token 1\) finished after the claim moved on \(now token 2\)/);
    clock.advance(1);
    expect(st.result).toBeUndefined();
  });
});
