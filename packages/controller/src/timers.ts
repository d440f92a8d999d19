// Time as a port: the queue, the manager and the elector take it as an argument, so unit tests drive
// them with FakeTimers (src/testing) and the process uses real ones.
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export const sleep = (timers: Timers, ms: number): Promise<void> =>
  new Promise((r) => {
    timers.setTimeout(r, ms);
  });
