// The process_* and nodejs_* metrics read from a RuntimeStats port: the event loop's delay is read
// once per scrape and shared by its gauges, and a stat the runtime cannot give has no sample.
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../testing/exposition.ts';
import { Registry } from './prometheus.ts';
import { type EventLoopDelay, registerRuntimeMetrics } from './runtime.ts';

const sample = (text: string, name: string) =>
  parseExposition(text)
    .flatMap((f) => f.samples)
    .find((s) => s.name === name)?.value;

describe('runtime metrics', () => {
  it("reads the event loop's delay once per scrape and shows each statistic under prom-client's names", () => {
    const periods: (EventLoopDelay | undefined)[] = [
      { min: 0.01, max: 0.21, mean: 0.012, stddev: 0.02, p50: 0.0101, p90: 0.011, p99: 0.2 },
      { min: 0.01, max: 0.012, mean: 0.0105, stddev: 0.0004, p50: 0.0104, p90: 0.011, p99: 0.012 },
      undefined,
    ];
    let reads = 0;
    const r = new Registry();
    registerRuntimeMetrics(r, { eventLoopDelay: () => periods[reads++] });

    const first = r.render();
    expect(reads).toBe(1);
    expect(sample(first, 'nodejs_eventloop_lag_max_seconds')).toBe(0.21);
    expect(sample(first, 'nodejs_eventloop_lag_p99_seconds')).toBe(0.2);
    expect(sample(first, 'nodejs_eventloop_lag_seconds')).toBe(0.012);
    expect(sample(first, 'nodejs_eventloop_lag_stddev_seconds')).toBe(0.02);

    // The next scrape shows the next period: the stall is not carried over.
    const second = r.render();
    expect(reads).toBe(2);
    expect(sample(second, 'nodejs_eventloop_lag_max_seconds')).toBe(0.012);
    expect(sample(second, 'nodejs_eventloop_lag_min_seconds')).toBe(0.01);

    // A period with no delay recorded has no sample (not a 0 that reads as "no delay").
    const third = r.render();
    for (const stat of ['', '_min', '_max', '_mean', '_stddev', '_p50', '_p90', '_p99'])
      expect(sample(third, `nodejs_eventloop_lag${stat}_seconds`)).toBeUndefined();
  });

  it('exports no delay sample where the runtime cannot measure it', () => {
    const r = new Registry();
    registerRuntimeMetrics(r, { residentBytes: () => 1024 });
    const text = r.render();
    expect(sample(text, 'process_resident_memory_bytes')).toBe(1024);
    expect(sample(text, 'nodejs_eventloop_lag_max_seconds')).toBeUndefined();
    expect(r.names()).toContain('nodejs_eventloop_lag_p99_seconds');
  });
});
