// core's Timers port over the process's clock and timers. Unref'd: a pending informer retry or
// watchdog never keeps a process alive that has nothing else to do.
import type { Timers } from '@claimkit/core';

export const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms` on `timers` (a FakeTimers in tests). */
export const sleep = (timers: Timers, ms: number): Promise<void> =>
  new Promise((r) => {
    timers.setTimeout(r, ms);
  });
