// The capture agent's state across restarts (a new CaptureAgent on the same --state-dir): fencing
// (409 for a lower token, the same job for a repeated start), jobs Running at a crash run again, a
// corrupt state file is moved aside, a state that cannot be saved refuses the start; and which
// capture runs for which options.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AgentLogLine, CaptureAgent, type CaptureAgentOptions, StaleToken } from './agent.ts';
import { STATE_FILE, validateState } from './state.ts';

const req = (token: number, pod = 'db-0') => ({
  namespace: 'ns',
  capture: 'snap',
  pod,
  uid: `uid-${pod}`,
  container: 'main',
  node: 'node-1',
  token,
});

const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

/** A capture that waits until the test releases its token (or the job is aborted). */
function gatedCapture() {
  const gates = new Map<number, (ref: string) => void>();
  const started: number[] = [];
  const capture: NonNullable<CaptureAgentOptions['capture']> = (r, signal) =>
    new Promise<string>((resolve, reject) => {
      started.push(r.token);
      gates.set(r.token, resolve);
      signal.addEventListener('abort', () => reject(new Error('aborted')));
    });
  return { capture, gates, started };
}

describe('CaptureAgent state across restarts (--state-dir)', () => {
  let dir: string;
  let stateDir: string;
  let logs: AgentLogLine[];
  const agents: CaptureAgent[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'claimkit-agent-state-'));
    stateDir = join(dir, 'state');
    logs = [];
  });
  afterEach(async () => {
    for (const a of agents.splice(0)) await a.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const agent = (o: CaptureAgentOptions = {}, sd = stateDir) => {
    const a = new CaptureAgent({ stateDir: sd, log: (l) => logs.push(l), ...o });
    agents.push(a);
    return a;
  };
  const saved = (sd = stateDir) => JSON.parse(readFileSync(join(sd, STATE_FILE), 'utf8'));

  it('a lower token than the saved highest is still 409 after a restart, over HTTP too', async () => {
    const g = gatedCapture();
    const a = agent({ capture: g.capture });
    a.start(req(3));
    a.start(req(5));
    await a.close();
    const b = agent({ capture: gatedCapture().capture });
    expect(() => b.start(req(4))).toThrow(StaleToken);
    const { url } = await b.listen(0, '127.0.0.1');
    const res = await fetch(url, { method: 'POST', body: JSON.stringify(req(2)) });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: 'token 2 is lower than 5, the highest seen for ns/snap' });
    expect(b.accepted.get('ns/snap')).toEqual([3, 5]);
    expect(b.rejected).toBe(2);
    expect(b.tokenViolations()).toEqual([]);
  });

  it('a repeated start is the same job after a restart, with its outcome', async () => {
    const g = gatedCapture();
    const a = agent({ capture: g.capture });
    const { id } = a.start(req(7));
    await tick(5);
    g.gates.get(7)!('ref-7');
    await tick();
    expect(a.job(id)).toEqual({ state: 'Succeeded', ref: 'ref-7' });
    await a.close();
    const g2 = gatedCapture();
    const b = agent({ capture: g2.capture });
    expect(b.start(req(7))).toEqual({ id, created: false });
    expect(b.job(id)).toEqual({ state: 'Succeeded', ref: 'ref-7' });
    const { url } = await b.listen(0, '127.0.0.1');
    const again = await fetch(url, { method: 'POST', body: JSON.stringify(req(7)) });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id });
    expect(await (await fetch(`${url}/${id}`)).json()).toEqual({ state: 'Succeeded', ref: 'ref-7' });
    expect(g2.started).toEqual([]); // nothing ran again
  });

  it('a job Running at a crash runs again on the next start (the state file as the crash left it)', async () => {
    const g = gatedCapture();
    const a = agent({ capture: g.capture });
    const { id } = a.start(req(4));
    await tick(5);
    // The crash: copy the state directory as it is while the job runs; the first agent never finishes.
    const crashed = join(dir, 'crashed');
    mkdirSync(crashed);
    writeFileSync(join(crashed, STATE_FILE), readFileSync(join(stateDir, STATE_FILE)));
    expect(saved(crashed).jobs).toEqual([
      expect.objectContaining({ id, state: { state: 'Running' }, runs: 1 }),
    ]);
    const g2 = gatedCapture();
    const b = agent({ capture: g2.capture }, crashed);
    await tick(5);
    expect(g2.started).toEqual([4]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: expect.stringMatching(/^job was Running when the agent stopped: running its capture again/),
        id,
        run: 2,
        token: 4,
      }),
    );
    expect(b.job(id)).toEqual({ state: 'Running' });
    expect(b.start(req(4))).toEqual({ id, created: false });
    g2.gates.get(4)!('ref-4');
    await tick();
    expect(b.job(id)).toEqual({ state: 'Succeeded', ref: 'ref-4' });
    expect(saved(crashed).jobs[0]).toMatchObject({
      id,
      state: { state: 'Succeeded', ref: 'ref-4' },
      runs: 2,
    });
  });

  it('a graceful shutdown leaves an unfinished job Running for the next start, and a superseded one Failed', async () => {
    const g = gatedCapture();
    const a = agent({ capture: g.capture });
    const old = a.start(req(1)).id;
    const cur = a.start(req(2)).id;
    await tick(5);
    expect(a.job(old)).toEqual({ state: 'Failed', error: 'superseded by token 2' });
    await a.close();
    expect(saved().jobs.map((j: { id: string; state: unknown }) => [j.id, j.state])).toEqual([
      [old, { state: 'Failed', error: 'superseded by token 2' }],
      [cur, { state: 'Running' }],
    ]);
    const g2 = gatedCapture();
    agent({ capture: g2.capture });
    await tick(5);
    expect(g2.started).toEqual([2]);
  });

  it('a corrupt state file is moved aside, said so in the log, and the agent starts empty', async () => {
    mkdirSync(stateDir, { recursive: true });
    for (const [text, problem] of [
      ['{"version":1,"highest":{"ns/snap":', /^not JSON: /],
      ['{"version":1,"highest":{"ns/snap":"x"},"accepted":{},"rejected":0,"jobs":[]}', /^highest: want/],
      ['{"version":1,"highest":{},"accepted":{},"rejected":0,"jobs":[{"id":"j"}]}', /^jobs\[0\]: startedAt/],
      ['[]', /^not an object$/],
    ] as const) {
      rmSync(stateDir, { recursive: true, force: true });
      mkdirSync(stateDir);
      writeFileSync(join(stateDir, STATE_FILE), text);
      logs = [];
      const a = agent({ capture: gatedCapture().capture, now: () => Date.parse('2026-05-01T10:00:00.000Z') });
      const aside = join(stateDir, `${STATE_FILE}.corrupt-2026-05-01T10-00-00-000Z`);
      expect(readFileSync(aside, 'utf8'), text).toBe(text);
      expect(existsSync(join(stateDir, STATE_FILE))).toBe(false);
      expect(logs, text).toContainEqual(
        expect.objectContaining({
          level: 'error',
          msg: expect.stringMatching(/^state file is corrupt: moved it aside and starting with empty state/),
          file: join(stateDir, STATE_FILE),
          movedTo: aside,
          problem: expect.stringMatching(problem),
        }),
      );
      // Empty: any token is accepted, and the new state is saved.
      expect(a.start(req(1)).created).toBe(true);
      expect(validateState(saved())).toMatchObject({ highest: { 'ns/snap': 1 } });
      await a.close();
    }
  });

  it('refuses a start it cannot save (503), changing nothing', async () => {
    const g = gatedCapture();
    const a = agent({ capture: g.capture });
    const first = a.start(req(1)).id;
    // Saving renames a temporary file over state.json; a directory there makes every save fail.
    rmSync(join(stateDir, STATE_FILE));
    mkdirSync(join(stateDir, STATE_FILE));
    const { url } = await a.listen(0, '127.0.0.1');
    const res = await fetch(url, { method: 'POST', body: JSON.stringify(req(2)) });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toMatch(
      /^cannot save the state to .*state\.json: /,
    );
    expect(a.accepted.get('ns/snap')).toEqual([1]);
    expect(a.job(first)).toEqual({ state: 'Running' }); // not superseded
    expect(g.started).toEqual([1]);
    // Once it can save again, the same start is accepted.
    rmSync(join(stateDir, STATE_FILE), { recursive: true });
    expect((await fetch(url, { method: 'POST', body: JSON.stringify(req(2)) })).status).toBe(201);
    expect(a.job(first)).toEqual({ state: 'Failed', error: 'superseded by token 2' });
  });

  it('saves atomically on every change (no temporary file left) in the documented shape', async () => {
    const g = gatedCapture();
    const a = agent({ capture: g.capture, now: () => Date.parse('2026-05-01T10:00:00.000Z') });
    const { id } = a.start(req(1));
    expect(saved()).toEqual({
      version: 1,
      highest: { 'ns/snap': 1 },
      accepted: { 'ns/snap': [1] },
      rejected: 0,
      jobs: [
        { id, req: req(1), state: { state: 'Running' }, startedAt: '2026-05-01T10:00:00.000Z', runs: 1 },
      ],
    });
    await tick(5);
    g.gates.get(1)!('r1');
    await tick();
    expect(saved().jobs[0]).toMatchObject({
      state: { state: 'Succeeded', ref: 'r1' },
      finishedAt: '2026-05-01T10:00:00.000Z',
    });
    expect(readdirSync(stateDir)).toEqual([STATE_FILE]);
  });

  it("forgets finished jobs of superseded tokens after retainMs, never the capture's highest", async () => {
    let now = Date.parse('2026-05-01T10:00:00.000Z');
    const g = gatedCapture();
    const a = agent({ capture: g.capture, now: () => now, retainMs: 60_000 });
    const one = a.start(req(1)).id;
    const two = a.start(req(2)).id;
    await tick(5);
    g.gates.get(2)!('r2');
    await tick();
    now += 61_000;
    await a.close();
    const b = agent({ capture: gatedCapture().capture, now: () => now, retainMs: 60_000 });
    expect(b.job(one)).toBeUndefined();
    expect(b.job(two)).toEqual({ state: 'Succeeded', ref: 'r2' });
    expect(() => b.start(req(1))).toThrow(StaleToken);
  });

  it('with no stateDir keeps everything in memory and writes nothing', async () => {
    const a = new CaptureAgent({ capture: gatedCapture().capture });
    agents.push(a);
    a.start(req(1));
    expect(existsSync(stateDir)).toBe(false);
  });
});

describe('which capture runs', () => {
  it('durationMs alone is the sleep capture (the old default), with its snapshot ref', async () => {
    const a = new CaptureAgent({ durationMs: 10 });
    const { id } = a.start(req(2));
    expect(a.job(id)).toEqual({ state: 'Running' });
    await tick(60);
    expect(a.job(id)).toEqual({ state: 'Succeeded', ref: 'snapshot://ns/snap/db-0@2' });
    await a.close();
  });

  it('a capture that throws a non-Error or returns no ref fails the job with a string error (the state stays loadable)', async () => {
    const a = new CaptureAgent({
      capture: async (r) => {
        if (r.token === 1) throw 'plain string';
        return undefined as unknown as string;
      },
    });
    const one = a.start(req(1)).id;
    const two = a.start({ ...req(2), capture: 'other' }).id;
    await tick();
    expect(a.job(one)).toEqual({ state: 'Failed', error: 'plain string' });
    expect(a.job(two)).toEqual({ state: 'Failed', error: 'the capture returned no ref (undefined)' });
    await a.close();
  });

  it('capture wins over durationMs', async () => {
    const a = new CaptureAgent({ durationMs: 10_000, capture: async (r) => `mine-${r.token}` });
    const { id } = a.start(req(1));
    await tick();
    expect(a.job(id)).toEqual({ state: 'Succeeded', ref: 'mine-1' });
    await a.close();
  });

  it('by default it is the kubelet checkpoint capture (here: no kubelet host, so the job fails saying so)', async () => {
    const env = process.env.NODE_IP;
    delete process.env.NODE_IP;
    try {
      const a = new CaptureAgent({ kubelet: { nodeName: 'node-1' } });
      const { id } = a.start(req(1));
      await tick();
      expect(a.job(id)).toEqual({
        state: 'Failed',
        error: 'no kubelet host to call (set --kubelet-host or $NODE_IP)',
      });
      await a.close();
    } finally {
      if (env !== undefined) process.env.NODE_IP = env;
    }
  });
});
