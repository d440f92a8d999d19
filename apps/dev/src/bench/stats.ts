// The benchmarks' pure parts: percentiles, Prometheus counter text -> request counts by class, and
// the merge of one benchmark's entry into bench/results.json (other entries kept).

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
  const c = { reads: 0, writes: 0, eventWrites: 0, podCreates: 0, bindWrites: 0, poolWrites: 0, errors: 0 };
  for (const [k, n] of Object.entries(requests)) {
    const [verb = '', resource = '', code = ''] = k.split(' ');
    if (!code.startsWith('2')) c.errors += n;
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
