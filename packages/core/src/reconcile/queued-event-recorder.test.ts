// Events written in the background by at most a few writers, in order, with a bounded queue whose
// overflow is dropped and counted; a failing write does not stop the ones behind it.
import { describe, expect, it } from 'vitest';
import type { EventSpec } from '../api/decision.ts';
import { QueuedEventRecorder } from './queued-event-recorder.ts';

const event = (i: number): EventSpec => ({
  regarding: { kind: 'PodClaim', namespace: 'ns', name: `c${i}`, uid: `u${i}` },
  type: 'Normal',
  reason: 'Bound',
  message: `bound c${i}`,
});

/** An inner recorder whose writes wait until released, keeping what it wrote in order. */
function gatedRecorder(fail: (e: EventSpec) => boolean = () => false) {
  const written: string[] = [];
  const held: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    written,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    releaseAll: () => {
      for (const r of held.splice(0)) r();
    },
    record: async (e: EventSpec) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((resolve) => held.push(resolve));
      inFlight--;
      if (fail(e)) throw new Error(`write of ${e.regarding.name} failed`);
      written.push(e.regarding.name);
    },
  };
}

/** Lets every promise chain ready to run settle (core has no timers: microtasks only). */
const turn = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('QueuedEventRecorder', () => {
  it('writes at most `writers` Events at a time, in the order recorded, and flush waits for all', async () => {
    const inner = gatedRecorder();
    const q = new QueuedEventRecorder(inner, { writers: 2 });
    const settled: string[] = [];
    for (let i = 0; i < 7; i++) void q.record(event(i)).then(() => settled.push(`c${i}`));
    await turn();
    expect(inner.inFlight()).toBe(2);
    expect(q.queued()).toBe(5);
    let flushed = false;
    void q.flush().then(() => {
      flushed = true;
    });
    while (inner.written.length < 7) {
      inner.releaseAll();
      await turn();
      expect(inner.inFlight()).toBeLessThanOrEqual(2);
    }
    await turn();
    expect(inner.written).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
    expect(settled).toEqual(inner.written);
    expect(inner.maxInFlight()).toBe(2);
    expect(flushed).toBe(true);
    await q.flush(); // nothing left: settles at once
  });

  it('drops what comes past `capacity` waiting Events, counts it, and writes the rest', async () => {
    const inner = gatedRecorder();
    const dropped: string[] = [];
    const q = new QueuedEventRecorder(inner, {
      writers: 1,
      capacity: 3,
      dropped: (e) => dropped.push(e.regarding.name),
    });
    for (let i = 0; i < 6; i++) void q.record(event(i));
    await turn();
    // c0 is being written, c1..c3 wait, c4 and c5 found the queue full.
    expect(dropped).toEqual(['c4', 'c5']);
    expect(q.queued()).toBe(3);
    const flushed = q.flush();
    while (q.queued() > 0 || inner.inFlight() > 0) {
      inner.releaseAll();
      await turn();
    }
    await flushed;
    expect(inner.written).toEqual(['c0', 'c1', 'c2', 'c3']);
    // With room again, the next Event is queued and written.
    void q.record(event(9));
    await turn();
    inner.releaseAll();
    await q.flush();
    expect(inner.written.at(-1)).toBe('c9');
  });

  it('a failed write settles its Event and the writer goes on with the next', async () => {
    const inner = gatedRecorder((e) => e.regarding.name === 'c1');
    const q = new QueuedEventRecorder(inner, { writers: 1 });
    const results = [0, 1, 2].map((i) => q.record(event(i)));
    const flushed = q.flush();
    while (inner.written.length < 2) {
      inner.releaseAll();
      await turn();
    }
    await expect(Promise.all(results)).resolves.toEqual([undefined, undefined, undefined]);
    await flushed;
    expect(inner.written).toEqual(['c0', 'c2']);
  });

  it('keeps its queue compact over a long run', async () => {
    const written: number[] = [];
    const q = new QueuedEventRecorder(
      { record: (e) => void written.push(Number(e.regarding.name.slice(1))) },
      { capacity: 10_000 },
    );
    for (let i = 0; i < 5000; i++) void q.record(event(i));
    await q.flush();
    expect(written).toHaveLength(5000);
    expect(written.every((x, i) => x === i)).toBe(true);
    expect(q.queued()).toBe(0);
  });
});
