// The benchmarks' pure parts: percentiles, Prometheus counter text -> request counts by class, the
// merge of one benchmark's entry into bench/results.json (other entries kept), arrival schedules
// (even and seeded Poisson), how pods and claims are split over pools, and targets with met/missed.
import { seededRandom } from '@claimkit/e2e/harness';

/** Nearest-rank percentile (p in 0..100) of `xs`; NaN for no samples. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

/** Latencies in ms: count, p50, p90, p99, max, mean (one decimal). */
export function latencySummary(xs: readonly number[]) {
  return {
    n: xs.length,
    p50Ms: r1(percentile(xs, 50)),
    p90Ms: r1(percentile(xs, 90)),
    p99Ms: r1(percentile(xs, 99)),
    maxMs: r1(xs.length ? Math.max(...xs) : Number.NaN),
    meanMs: r1(xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN),
  };
}

/** One sample of a Prometheus counter: its labels and value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of `metric` in Prometheus text exposition (comments and other metrics skipped). */
export function parseCounter(text: string, metric: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== metric) continue;
    const labels: Record<string, string> = {};
    for (const lm of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[lm[1]!] = lm[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

const READ_VERBS = new Set(['get', 'list', 'watch']);
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'updateStatus', 'patchStatus', 'delete']);

/** `verb resource code` -> count, of claimkit_api_requests_total. */
export function requestCounts(metricsText: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of parseCounter(metricsText, 'claimkit_api_requests_total')) {
    const k = `${s.labels.verb} ${s.labels.resource} ${s.labels.code}`;
    out[k] = (out[k] ?? 0) + s.value;
  }
  return out;
}

/** after - before, keys that did not change left out. */
export function diffCounts(before: Record<string, number>, after: Record<string, number>) {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/**
 * Requests (from `diffCounts` of `requestCounts`) split into reads and writes, Events apart, each
 * also per `per` (claims); the bind's writes are those to Pods and PodClaims other than creates.
 */
export function classifyRequests(requests: Record<string, number>, per: number) {
  const c = {
    reads: 0,
    writes: 0,
    eventWrites: 0,
    podCreates: 0,
    bindWrites: 0,
    poolWrites: 0,
    errors: 0,
    conflicts409: 0,
  };
  for (const [k, n] of Object.entries(requests)) {
    const [verb = '', resource = '', code = ''] = k.split(' ');
    if (!code.startsWith('2')) c.errors += n;
    if (code === '409') c.conflicts409 += n;
    if (resource === 'Event') {
      if (WRITE_VERBS.has(verb)) c.eventWrites += n;
      continue;
    }
    if (READ_VERBS.has(verb)) c.reads += n;
    else if (WRITE_VERBS.has(verb)) {
      c.writes += n;
      if (resource === 'Pod' && verb === 'create') c.podCreates += n;
      else if (resource === 'Pod' || resource === 'PodClaim') {
        if (code.startsWith('2')) c.bindWrites += n;
      } else if (resource === 'PodPool') c.poolWrites += n;
    }
  }
  const r2 = (x: number) => Math.round((x / Math.max(1, per)) * 100) / 100;
  return {
    ...c,
    readsPerClaim: r2(c.reads),
    writesPerClaim: r2(c.writes),
    eventWritesPerClaim: r2(c.eventWrites),
    /** Successful Pod/PodClaim writes other than pod creates, per claim: the bind's own writes. */
    writesPerBind: r2(c.bindWrites),
    /** 409 Conflict answers (any verb and resource, Events included) per claim. */
    conflictsPerBind: Math.round((c.conflicts409 / Math.max(1, per)) * 1000) / 1000,
  };
}

/**
 * bench/results.json with `entry` at `section.key`, every other section and key as it was. A file
 * that is not a JSON object is started anew (the caller says so).
 */
export function mergeResults(
  existing: unknown,
  section: string,
  key: string,
  entry: unknown,
): Record<string, unknown> {
  const all: Record<string, unknown> =
    existing && typeof existing === 'object' && !Array.isArray(existing)
      ? { ...(existing as Record<string, unknown>) }
      : {};
  const sec = all[section];
  all[section] = {
    ...(sec && typeof sec === 'object' && !Array.isArray(sec) ? (sec as Record<string, unknown>) : {}),
    [key]: entry,
  };
  return all;
}

/** Times (ms since start) at which `n` arrivals at `perSec` are due: an open loop's schedule. */
export function arrivalSchedule(n: number, perSec: number): number[] {
  return Array.from({ length: n }, (_, i) => (i * 1000) / perSec);
}

/**
 * Times (ms since start) of `n` arrivals of a Poisson process at `perSec`: exponential inter-arrival
 * times drawn from a PRNG seeded with `seed` (the first arrival one gap after 0).
 */
export function poissonSchedule(n: number, perSec: number, seed: number): number[] {
  const rand = seededRandom(seed);
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    // 1 - U is in (0, 1], so the log is finite.
    t += (-Math.log(1 - rand()) * 1000) / perSec;
    out.push(t);
  }
  return out;
}

/** `total` split into `parts` as evenly as can be (the first `total % parts` one more). */
export function splitEvenly(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  return Array.from({ length: parts }, (_, i) => base + (i < total % parts ? 1 : 0));
}

/** A PodPool the load runs against: its namespace (index), name, warm pods and cap. */
export interface PoolPlan {
  namespace: number;
  name: string;
  minIdle: number;
  maxPods: number;
}

/**
 * `pools` pools spread over `namespaces` namespaces (pools / namespaces each, named `warm` when a
 * namespace holds one, else `warm-0`, `warm-1`, ...): the `warm` pods split evenly as minIdle, and
 * the `refill` pods the pools may create beyond them (while claims bind) split the same way, so
 * maxPods = minIdle + its share of `refill`. Claim i goes to pool i % pools (round-robin).
 */
export function planPools(o: {
  warm: number;
  refill: number;
  namespaces: number;
  pools: number;
}): PoolPlan[] {
  if (o.pools % o.namespaces !== 0)
    throw new Error(`${o.pools} pools do not spread evenly over ${o.namespaces} namespaces`);
  const perNs = o.pools / o.namespaces;
  const warm = splitEvenly(o.warm, o.pools);
  const refill = splitEvenly(o.refill, o.pools);
  return warm.map((w, j) => ({
    namespace: Math.floor(j / perNs),
    name: perNs === 1 ? 'warm' : `warm-${j % perNs}`,
    minIdle: w,
    maxPods: w + refill[j]!,
  }));
}

/** A measured value beside its target: met when value <= target (or >= for `atLeast`). */
export interface Target {
  value: number;
  target: number;
  met: boolean;
  atLeast?: true;
}

export function atMost(value: number, target: number): Target {
  return { value, target, met: Number.isFinite(value) && value <= target };
}

export function atLeast(value: number, target: number): Target {
  return { value, target, met: Number.isFinite(value) && value >= target, atLeast: true };
}

/** `x` to 3 significant decimals (CPU per claim is small). */
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Issue 22's efficiency figures for one phase: controller and API server CPU-seconds per bound claim
 * (from unrounded CPU-second deltas), their ratio, controller CPU ms per claim, 409s per bind and
 * writes per bind, each with its target.
 */
export function efficiency(o: {
  controllerCpuSeconds: number;
  apiServerCpuSeconds: number;
  binds: number;
  conflicts409: number;
  writesPerBind: number;
}) {
  const binds = Math.max(1, o.binds);
  const ctl = o.controllerCpuSeconds / binds;
  const api = o.apiServerCpuSeconds / binds;
  return {
    controllerCpuSecondsPerBind: Math.round(ctl * 1e6) / 1e6,
    apiServerCpuSecondsPerBind: Math.round(api * 1e6) / 1e6,
    cpuRatio: atMost(r3(api > 0 ? ctl / api : Number.NaN), 0.15),
    controllerCpuMsPerClaim: atMost(r3(ctl * 1000), 2),
    conflictsPerBind: atMost(r3(o.conflicts409 / binds), 0.05),
    writesPerBind: atMost(o.writesPerBind, 2),
  };
}

/** Rows of `name  value  target  met|missed`, aligned: the run's summary for a human. */
export function targetTable(rows: ReadonlyArray<readonly [string, Target]>): string {
  const cells = rows.map(([name, t]) => [
    name,
    String(t.value),
    `${t.atLeast ? '>=' : '<='} ${t.target}`,
    t.met ? 'met' : 'MISSED',
  ]);
  const widths = [0, 1, 2, 3].map((c) => Math.max(...cells.map((r) => r[c]!.length), 0));
  return cells
    .map((r) =>
      r
        .map((x, c) => x.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * The figures a scaled warm-pool-scale run is compared with, from a stored warm-pool-scale entry
 * (its steady claim -> Bound p50/p99, controller CPU ms per claim), or undefined if it has none.
 */
export function warmPoolBaseline(entry: unknown):
  | {
      p50Ms: number;
      p99Ms: number;
      controllerCpuMsPerClaim: number;
      podPoolReconcileMeanMs?: number;
      date?: string;
    }
  | undefined {
  const e = entry as {
    date?: string;
    steadyClaims?: number;
    steady?: {
      latency?: { addedToBound?: { p50Ms?: number; p99Ms?: number } };
      cpu?: { controller?: { cpuSeconds?: number } };
      efficiency?: { controllerCpuMsPerClaim?: { value?: number } };
      reconcilesByKind?: { PodPool?: { meanMs?: number } };
    };
  } | null;
  const lat = e?.steady?.latency?.addedToBound;
  if (typeof lat?.p50Ms !== 'number' || typeof lat.p99Ms !== 'number') return undefined;
  const stored = e?.steady?.efficiency?.controllerCpuMsPerClaim?.value;
  const cpu = e?.steady?.cpu?.controller?.cpuSeconds;
  const perClaim =
    typeof stored === 'number'
      ? stored
      : typeof cpu === 'number' && e?.steadyClaims
        ? r3((cpu / e.steadyClaims) * 1000)
        : Number.NaN;
  return {
    p50Ms: lat.p50Ms,
    p99Ms: lat.p99Ms,
    controllerCpuMsPerClaim: perClaim,
    ...(typeof e?.steady?.reconcilesByKind?.PodPool?.meanMs === 'number'
      ? { podPoolReconcileMeanMs: e.steady.reconcilesByKind.PodPool.meanMs }
      : {}),
    ...(e?.date ? { date: e.date } : {}),
  };
}

/**
 * Where a warm-pool-scale run is stored in bench/results.json: `warm-pool-scale` (`-quick`) at its
 * preset's scale in one namespace, else `warm-pool-scale-<pods>x<namespaces>` (`-quick`).
 */
export function warmPoolScaleKey(o: {
  quick: boolean;
  pods: number;
  presetPods: number;
  namespaces: number;
  memoryLimitBytes?: number;
  shards?: number;
}) {
  const scaled = o.pods !== o.presetPods || o.namespaces !== 1 ? `-${o.pods}x${o.namespaces}` : '';
  return `warm-pool-scale${scaled}${o.quick ? '-quick' : ''}${memoryLimitSuffix(o.memoryLimitBytes)}${shardsSuffix(o.shards)}`;
}

/** A run with several controller shards is stored apart: `-shards2`. */
export const shardsSuffix = (shards: number | undefined) => (shards && shards > 1 ? `-shards${shards}` : '');

/** A run under a memory limit is stored apart from the unlimited one: `-mem512Mi`. */
export const memoryLimitSuffix = (bytes: number | undefined) =>
  bytes === undefined ? '' : `-mem${Math.round(bytes / 2 ** 20)}Mi`;

/**
 * Reconciles by kind between two /metrics scrapes (claimkit_reconcile_duration_seconds' _count and
 * _sum): how many, their total seconds and mean ms. A pool reconcile's cost should not grow with
 * the pool's idle pods (issue 22), which the mean PodPool ms shows across scales.
 */
export function reconcilesByKind(before: string, after: string) {
  const byKind = (text: string, suffix: string) => {
    const out: Record<string, number> = {};
    for (const s of parseCounter(text, `claimkit_reconcile_duration_seconds_${suffix}`)) {
      const kind = s.labels.kind ?? '';
      out[kind] = (out[kind] ?? 0) + s.value;
    }
    return out;
  };
  const n = diffCounts(byKind(before, 'count'), byKind(after, 'count'));
  const sec = diffCounts(byKind(before, 'sum'), byKind(after, 'sum'));
  const out: Record<string, { n: number; seconds: number; meanMs: number }> = {};
  for (const [kind, count] of Object.entries(n))
    out[kind] = {
      n: count,
      seconds: r3(sec[kind] ?? 0),
      meanMs: r3(((sec[kind] ?? 0) / count) * 1000),
    };
  return out;
}

/**
 * A histogram's cumulative bucket counts (`le` -> count, +Inf included) and its _sum, summed over
 * the series whose labels `match` accepts (e.g. every code of one verb and resource).
 */
export interface HistogramSnapshot {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

export function histogramSnapshot(
  text: string,
  metric: string,
  match: (labels: Record<string, string>) => boolean,
): HistogramSnapshot {
  const buckets = new Map<number, number>();
  for (const s of parseCounter(text, `${metric}_bucket`)) {
    if (!match(s.labels)) continue;
    const le = s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  const total = (suffix: string) =>
    parseCounter(text, `${metric}_${suffix}`)
      .filter((s) => match(s.labels))
      .reduce((a, s) => a + s.value, 0);
  return { buckets, sum: total('sum'), count: total('count') };
}

/** What a histogram observed between two snapshots (a series missing before counts from zero). */
export function histogramBetween(before: HistogramSnapshot, after: HistogramSnapshot): HistogramSnapshot {
  const buckets = new Map<number, number>();
  for (const [le, n] of after.buckets) buckets.set(le, n - (before.buckets.get(le) ?? 0));
  return { buckets, sum: after.sum - before.sum, count: after.count - before.count };
}

/**
 * Prometheus' histogram_quantile: the bucket holding rank q*count, linearly interpolated inside
 * it (from 0 for the first); in the +Inf bucket, the highest finite bound. NaN without samples.
 */
export function histogramQuantile(h: HistogramSnapshot, q: number): number {
  const les = [...h.buckets.keys()].sort((a, b) => a - b);
  const total = h.buckets.get(Number.POSITIVE_INFINITY) ?? h.count;
  if (!(total > 0) || les.length === 0) return Number.NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const le of les) {
    const n = h.buckets.get(le)!;
    if (n >= rank) {
      if (le === Number.POSITIVE_INFINITY) return prevLe;
      return n === prevCount ? le : prevLe + ((le - prevLe) * (rank - prevCount)) / (n - prevCount);
    }
    prevLe = le;
    prevCount = n;
  }
  return prevLe;
}

/** A window of a seconds histogram in ms: how many, their mean, p50 and p99 (one decimal). */
export function histogramSummaryMs(h: HistogramSnapshot) {
  return {
    n: h.count,
    meanMs: r1(h.count > 0 ? (h.sum / h.count) * 1000 : Number.NaN),
    p50Ms: r1(histogramQuantile(h, 0.5) * 1000),
    p99Ms: r1(histogramQuantile(h, 0.99) * 1000),
  };
}
