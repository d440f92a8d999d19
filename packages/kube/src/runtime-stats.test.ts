// Node's own readings behind the nodejs_* metrics: a stall of the event loop shows in the max of the
// scrape after it, and not in the one after that.
import { Registry, registerRuntimeMetrics } from '@claimkit/core/metrics';
import { describe, expect, it } from 'vitest';
import { watchNodeRuntime } from './runtime-stats.ts';

const gauge = (text: string, name: string) => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};
const turns = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('watchNodeRuntime', () => {
  it("shows a 300 ms stall in the next scrape's max and p99 delay, then a new period", async () => {
    const registry = new Registry();
    const stop = watchNodeRuntime(registerRuntimeMetrics(registry));
    try {
      await turns(50);
      registry.render(); // starts the period the stall falls into
      await turns(30);
      const until = performance.now() + 300;
      while (performance.now() < until) {
        // a synchronous stall, as a long pass over a big cache would be
      }
      await turns(50);
      const stalled = registry.render();
      expect(gauge(stalled, 'nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual(0.3);
      // About a dozen 10 ms samples and the stall's one: the stall is the p99, not the median.
      expect(gauge(stalled, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0.3);
      expect(gauge(stalled, 'nodejs_eventloop_lag_p50_seconds')).toBeLessThan(0.3);
      expect(gauge(stalled, 'nodejs_eventloop_lag_seconds')).toBeGreaterThan(0);

      await turns(100);
      const after = registry.render();
      expect(gauge(after, 'nodejs_eventloop_lag_max_seconds')).toBeLessThan(0.3);
      expect(gauge(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });
});
