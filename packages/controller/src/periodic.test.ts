// The Manager's timed work (sweep, resync, doctor): a run re-arms only once it has ended, so a slow
// run is never overlapped by the next; stop() leaves nothing armed; an interval of 0 never runs.
import { FakeTimers } from '@claimkit/core/testing';
import { describe, expect, it } from 'vitest';
import { Periodic } from './periodic.ts';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('Periodic', () => {
  it('runs after its first delay, then its interval after each run has ended', async () => {
    const timers = new FakeTimers();
    let runs = 0;
    let finish!: () => void;
    const p = new Periodic(timers, {
      name: 't',
      intervalMs: 1000,
      firstDelayMs: 0,
      run: () =>
        new Promise<void>((r) => {
          runs++;
          finish = r;
        }),
    });
    p.start();
    timers.advance(0);
    expect(runs).toBe(1);
    // The first run has not ended: however long it takes, no second run starts.
    timers.advance(5000);
    expect([runs, timers.size]).toEqual([1, 0]);
    finish();
    await tick();
    expect(timers.size).toBe(1);
    timers.advance(999);
    expect(runs).toBe(1);
    timers.advance(1);
    expect(runs).toBe(2);
  });

  it('stop() leaves nothing armed, and a run ending after stop() does not re-arm', async () => {
    const timers = new FakeTimers();
    let finish!: () => void;
    const p = new Periodic(timers, {
      name: 't',
      intervalMs: 1000,
      run: () =>
        new Promise<void>((r) => {
          finish = r;
        }),
    });
    p.start();
    expect(timers.size).toBe(1);
    timers.advance(1000);
    p.stop();
    finish();
    await tick();
    expect(timers.size).toBe(0);
    p.start();
    p.stop();
    expect(timers.size).toBe(0);
  });

  it('an interval of 0 never runs', () => {
    const timers = new FakeTimers();
    const p = new Periodic(timers, { name: 't', intervalMs: 0, run: () => expect.fail('ran') });
    p.start();
    expect(timers.size).toBe(0);
  });
});
