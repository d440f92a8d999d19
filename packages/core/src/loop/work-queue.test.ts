import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../testing/fake-timers.ts';
import { WorkQueue, type WorkQueueOptions } from './work-queue.ts';

const mk = (opts: Omit<WorkQueueOptions, 'timers'> = {}) => {
  const timers = new FakeTimers();
  return { timers, q: new WorkQueue({ timers, ...opts }) };
};

describe('WorkQueue', () => {
  it('de-duplicates a key added many times', async () => {
    const { q } = mk();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.len()).toBe(0);
  });

  it('never hands the same key to two workers; an add while processing re-queues on done', async () => {
    const { q } = mk();
    q.add('a');
    const k = await q.get();
    q.add('a');
    expect(q.len()).toBe(0); // not visible to another worker
    let second: string | undefined = 'pending';
    const p = q.get().then((x) => {
      second = x;
    });
    await Promise.resolve();
    expect(second).toBe('pending');
    q.done(k!);
    await p;
    expect(second).toBe('a');
  });

  it('tryGet takes a ready key without waiting, and answers undefined when none is ready', async () => {
    const { q } = mk();
    expect(q.tryGet()).toBeUndefined();
    q.add('a');
    expect(q.tryGet()).toBe('a');
    q.add('a'); // while processing: not ready until done
    expect(q.tryGet()).toBeUndefined();
    q.done('a');
    expect(q.tryGet()).toBe('a');
  });

  it('headWaitMs is how long the next ready key has waited for a worker (without an observer too)', async () => {
    const { q, timers } = mk();
    expect(q.headWaitMs()).toBe(0);
    q.add('a');
    timers.advance(40);
    q.add('b');
    timers.advance(70);
    expect(q.headWaitMs()).toBe(110);
    await q.get();
    expect(q.headWaitMs()).toBe(70);
    await q.get();
    expect(q.headWaitMs()).toBe(0);
    // A key added while a worker held it waits for a worker only from that worker's done().
    q.add('b');
    timers.advance(30);
    q.done('b');
    expect(q.headWaitMs()).toBe(0);
    timers.advance(5);
    expect(q.headWaitMs()).toBe(5);
  });

  it('addAfter waits for the clock and keeps the earliest due time', async () => {
    const { q, timers } = mk();
    q.addAfter('a', 1000);
    q.addAfter('a', 300);
    q.addAfter('a', 5000);
    timers.advance(299);
    expect(q.len()).toBe(0);
    timers.advance(1);
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
    q.done('a');
    timers.advance(10_000);
    expect(q.len()).toBe(0);
  });

  it('an immediate add supersedes a pending delayed one', () => {
    const { q, timers } = mk();
    q.addAfter('a', 1000);
    q.add('a');
    expect(q.len()).toBe(1);
    timers.advance(2000);
    expect(q.len()).toBe(1);
  });

  it('backs off per key exponentially and forgets on success', () => {
    const { q } = mk({ baseDelayMs: 10, maxDelayMs: 100, burst: 1000 });
    expect([q.when('a'), q.when('a'), q.when('a'), q.when('a'), q.when('a'), q.when('a')]).toEqual([
      10, 20, 40, 80, 100, 100,
    ]);
    expect(q.when('b')).toBe(10);
    q.forget('a');
    expect(q.when('a')).toBe(10);
  });

  it('limits the overall retry rate with a token bucket', () => {
    const { q, timers } = mk({ baseDelayMs: 1, qps: 10, burst: 2 });
    expect(q.when('a')).toBe(1);
    expect(q.when('b')).toBe(1);
    expect(q.when('c')).toBe(100); // bucket empty: one token per 100 ms
    expect(q.when('d')).toBe(200);
    timers.advance(1000);
    expect(q.when('e')).toBe(1);
  });

  it('shutDown releases waiting workers and stops intake', async () => {
    const { q } = mk();
    const p = q.get();
    q.shutDown();
    expect(await p).toBeUndefined();
    q.add('a');
    expect(await q.get()).toBeUndefined();
  });

  it('drained resolves when in-flight keys are done', async () => {
    const { q } = mk();
    q.add('a');
    await q.get();
    let drained = false;
    const p = q.drained().then(() => {
      drained = true;
    });
    await Promise.resolve();
    expect(drained).toBe(false);
    q.done('a');
    await p;
    expect(drained).toBe(true);
  });

  it('reports its depth', () => {
    const depths: number[] = [];
    const { q } = mk({ onDepth: (d) => depths.push(d) });
    q.add('a');
    q.add('b');
    expect(depths.at(-1)).toBe(2);
  });

  it("reports client-go's workqueue metrics to its observer: adds once per queued key, time queued, time worked", async () => {
    const seen = { added: 0, waited: [] as number[], worked: [] as number[] };
    const { q, timers } = mk({
      observer: {
        added: () => seen.added++,
        taken: (ms) => seen.waited.push(ms),
        finished: (ms) => seen.worked.push(ms),
      },
    });
    q.add('a');
    q.add('a'); // already queued: not an add
    timers.advance(30);
    const k = (await q.get())!;
    expect(seen).toEqual({ added: 1, waited: [30], worked: [] });
    q.add('a'); // while processing: queued again once done (counted now, waits from now)
    timers.advance(20);
    expect(q.processingMs()).toEqual([20]);
    q.done(k);
    expect(seen.worked).toEqual([20]);
    expect(q.processingMs()).toEqual([]);
    timers.advance(5);
    await q.get();
    expect(seen).toEqual({ added: 2, waited: [30, 25], worked: [20] });
  });
});
