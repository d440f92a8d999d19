import { describe, expect, it } from 'vitest';
import { maxWorkers, SURGE_AFTER_MS, shouldAddWorker } from './worker-surge.ts';

describe('workers while the queue backs up', () => {
  const behind = { ready: 3, headWaitMs: SURGE_AFTER_MS, workers: 8, maxWorkers: 32 };

  it('adds a worker when a ready key has waited SURGE_AFTER_MS, below the ceiling', () => {
    expect(shouldAddWorker(behind)).toBe(true);
  });

  it.each([
    ['no key ready', { ...behind, ready: 0 }],
    ['the next key has not waited long', { ...behind, headWaitMs: SURGE_AFTER_MS - 1 }],
    ['at the ceiling', { ...behind, workers: 32 }],
  ])('adds none: %s', (_why, state) => {
    expect(shouldAddWorker(state)).toBe(false);
  });

  it('the ceiling is --max-concurrency, never below --concurrency', () => {
    expect(maxWorkers(8, 32)).toBe(32);
    expect(maxWorkers(50, 32)).toBe(50);
    expect(maxWorkers(8, 8)).toBe(8);
  });
});
