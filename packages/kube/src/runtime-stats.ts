// What Node tells beyond `process` for the process_* and nodejs_* metrics (core's metrics/runtime.ts):
// event-loop lag, GC pauses, file descriptors and virtual memory from /proc (Linux; elsewhere those
// have no sample). Its own entry (`@claimkit/kube/runtime-stats`) so the webhook's Node entry can use
// it without loading the Kubernetes client.
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { processStats, type RuntimeMetrics, type RuntimeStats } from '@claimkit/core/metrics';

const attempt = <T>(f: () => T): T | undefined => {
  try {
    return f();
  } catch {
    return undefined;
  }
};

/** Open and max file descriptors and virtual memory, read from /proc/self (undefined elsewhere). */
export function procStats(proc = '/proc/self'): RuntimeStats {
  return {
    openFds: () => attempt(() => readdirSync(`${proc}/fd`).length),
    maxFds: () =>
      attempt(() => {
        const m = /^Max open files\s+(\d+)/m.exec(readFileSync(`${proc}/limits`, 'utf8'));
        return m ? Number(m[1]) : undefined;
      }),
    virtualBytes: () =>
      attempt(() => {
        const m = /^VmSize:\s+(\d+) kB/m.exec(readFileSync(`${proc}/status`, 'utf8'));
        return m ? Number(m[1]) * 1024 : undefined;
      }),
  };
}

/** GC kinds as prom-client labels them (perf_hooks' NODE_PERFORMANCE_GC_* flags). */
const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };

/**
 * Feeds `metrics` from this Node process: `process` and /proc at scrape time, the event loop's delay
 * since the previous scrape (min, max, mean, stddev, p50, p90, p99) and every GC pause. Returns a function that stops watching.
 */
export function watchNodeRuntime(metrics: RuntimeMetrics): () => void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  metrics.use({
    ...processStats(process),
    ...procStats(),
    eventLoopDelay: () => {
      // Sampled every 10 ms, so each delay includes those 10 ms (as prom-client's gauges do).
      if (delay.count === 0) return undefined;
      const read = {
        min: delay.min / 1e9,
        max: delay.max / 1e9,
        mean: delay.mean / 1e9,
        stddev: delay.stddev / 1e9,
        p50: delay.percentile(50) / 1e9,
        p90: delay.percentile(90) / 1e9,
        p99: delay.percentile(99) / 1e9,
      };
      delay.reset();
      return read;
    },
  });
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = GC_KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'unknown';
      metrics.gc.observe(e.duration / 1000, { kind });
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  return () => {
    delay.disable();
    gc.disconnect();
  };
}
