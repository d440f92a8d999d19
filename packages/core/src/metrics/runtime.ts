// process_* and nodejs_* metrics under prom-client's default names, read at scrape time from a
// RuntimeStats port: core stays runtime-free, the runtimes (controller on Node, webhook on Node and
// Deno) pass in what their runtime can tell. A stat the runtime cannot give has no sample.
import { Gauge, Histogram, type Registry } from './prometheus.ts';

/** What a runtime can tell about its process; every reader is optional. */
export interface RuntimeStats {
  cpuSeconds?(): number;
  residentBytes?(): number;
  virtualBytes?(): number | undefined;
  heapBytes?(): number;
  startTimeSeconds?: number;
  openFds?(): number | undefined;
  maxFds?(): number | undefined;
  /**
   * The event loop's delay since the previous read, in seconds; each read starts a new period (the
   * registry reads it once per scrape, before the gauges that show it).
   */
  eventLoopDelay?(): EventLoopDelay | undefined;
  heapUsedBytes?(): number;
  heapTotalBytes?(): number;
  externalBytes?(): number;
  version?: string;
}

/** Event-loop delay over one scrape period, in seconds (prom-client's nodejs_eventloop_lag_*_seconds). */
export interface EventLoopDelay {
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

/** The event-loop delay gauges, by the statistic each shows. */
const EVENT_LOOP_GAUGES: [keyof EventLoopDelay, string][] = [
  ['min', 'The minimum recorded event loop delay.'],
  ['max', 'The maximum recorded event loop delay.'],
  ['mean', 'The mean of the recorded event loop delays.'],
  ['stddev', 'The standard deviation of the recorded event loop delays.'],
  ['p50', 'The 50th percentile of the recorded event loop delays.'],
  ['p90', 'The 90th percentile of the recorded event loop delays.'],
  ['p99', 'The 99th percentile of the recorded event loop delays.'],
];

/** The subset of Node's (and Deno's `node:process`-compatible) global `process` these read. */
export interface ProcessLike {
  cpuUsage?(): { user: number; system: number };
  memoryUsage?(): { rss: number; heapTotal: number; heapUsed: number; external: number };
  uptime?(): number;
  version?: string;
}

/** RuntimeStats from a `process`-like object (what both Node and Deno offer as `globalThis.process`). */
export function processStats(proc: ProcessLike, now: () => number = () => Date.now()): RuntimeStats {
  const mem = () => proc.memoryUsage?.();
  const stats: RuntimeStats = {};
  if (proc.cpuUsage) {
    const cpu = proc.cpuUsage.bind(proc);
    stats.cpuSeconds = () => {
      const u = cpu();
      return (u.user + u.system) / 1e6;
    };
  }
  if (proc.memoryUsage) {
    stats.residentBytes = () => mem()?.rss ?? 0;
    stats.heapBytes = () => mem()?.heapTotal ?? 0;
    stats.heapUsedBytes = () => mem()?.heapUsed ?? 0;
    stats.heapTotalBytes = () => mem()?.heapTotal ?? 0;
    stats.externalBytes = () => mem()?.external ?? 0;
  }
  if (proc.uptime) stats.startTimeSeconds = Math.round(now() / 1000 - proc.uptime());
  if (proc.version) stats.version = proc.version;
  return stats;
}

/** GC pause buckets (seconds), prom-client's. */
const GC_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

export interface RuntimeMetrics {
  /** Observe GC pauses here ({kind: minor|major|incremental|weakcb}), when the runtime reports them. */
  gc: Histogram;
  /** Replace or extend the stats (the Node entry adds event-loop lag and file descriptors). */
  use(stats: RuntimeStats): void;
}

/** Registers every RUNTIME_METRIC_NAMES metric on `registry`, read from `stats` at scrape time. */
export function registerRuntimeMetrics(registry: Registry, stats: RuntimeStats = {}): RuntimeMetrics {
  let s = stats;
  const one = (name: string, help: string, read: () => number | undefined) =>
    registry.register(
      new Gauge(name, help, () => {
        const v = read();
        return v === undefined || Number.isNaN(v) ? [] : [{ labels: {}, v }];
      }),
    );
  registry.register(
    new Gauge(
      'process_cpu_seconds_total',
      'Total user and system CPU time spent in seconds.',
      () => {
        const v = s.cpuSeconds?.();
        return v === undefined ? [] : [{ labels: {}, v }];
      },
      'counter',
    ),
  );
  one('process_resident_memory_bytes', 'Resident memory size in bytes.', () => s.residentBytes?.());
  one('process_virtual_memory_bytes', 'Virtual memory size in bytes.', () => s.virtualBytes?.());
  one('process_heap_bytes', 'Process heap size in bytes.', () => s.heapBytes?.());
  one(
    'process_start_time_seconds',
    'Start time of the process since unix epoch in seconds.',
    () => s.startTimeSeconds,
  );
  one('process_open_fds', 'Number of open file descriptors.', () => s.openFds?.());
  one('process_max_fds', 'Maximum number of open file descriptors.', () => s.maxFds?.());
  // One read of the delay per scrape, shared by its gauges: a read starts the next period, and the
  // max is what shows a stall between two scrapes (the mean hides it).
  let delay: EventLoopDelay | undefined;
  registry.onRender(() => {
    delay = s.eventLoopDelay?.();
  });
  one('nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.', () => delay?.mean);
  for (const [stat, help] of EVENT_LOOP_GAUGES) {
    one(`nodejs_eventloop_lag_${stat}_seconds`, help, () => delay?.[stat]);
  }
  one('nodejs_heap_size_used_bytes', 'Process heap size used in bytes.', () => s.heapUsedBytes?.());
  one('nodejs_heap_size_total_bytes', 'Process heap size in bytes.', () => s.heapTotalBytes?.());
  one('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', () => s.externalBytes?.());
  const gc = registry.register(
    new Histogram('nodejs_gc_duration_seconds', 'Garbage collection duration by kind.', GC_BUCKETS),
  );
  registry.register(
    new Gauge('nodejs_version_info', 'Node.js (or Deno) version info.', () =>
      s.version === undefined ? [] : [{ labels: { version: s.version }, v: 1 }],
    ),
  );
  return {
    gc,
    use: (more) => {
      s = { ...s, ...more };
    },
  };
}
