// What happened in each window of a steady phase besides the claims' own latencies, so a slow window
// says where its claims waited: the controller's API request latency by verb and resource (its
// claimkit_api_request_duration_seconds), the API server's own for the same objects
// (apiserver_request_duration_seconds, and etcd_request_duration_seconds under it), and a canary pod
// the bench patches every CANARY_MS: how long each patch took to answer and how long after the answer
// its event arrived on the bench's pod watch (the delivery every pod watcher, the controller's
// included, depends on). Scrapes are taken at window boundaries; a window is from one to the next.
import {
  type HistogramSnapshot,
  histogramBetween,
  histogramSnapshot,
  histogramSummaryMs,
  latencySummary,
  parseCounter,
} from './stats.ts';

/** How often the canary pod is patched. */
export const CANARY_MS = 500;

/** The canary's annotation: the patch's sequence number, which its watch event carries back. */
export const CANARY_ANNOTATION = 'bench.claimkit.dev/canary-seq';

/** Series kept per window: `verb resource` (the controller's) or `VERB resource[/subresource]` (the API server's). */
type Series = Map<string, HistogramSnapshot>;

interface Scrape {
  at: number;
  controller: Series;
  /** The controller's own time: GC pauses by kind, reconciles by kind and result, work queue waits. */
  controllerTime: Series;
  /** The controller's longest event-loop delay since the previous scrape (nodejs_eventloop_lag_max_seconds), ms. */
  eventLoopMaxMs?: number;
  apiServer: Series;
  etcd: Series;
  /** etcd's own: its backend commits, compactions (ms histogram) and keys compacted; when its /metrics is reachable. */
  etcdServer?: { commits: Series; compactions: HistogramSnapshot; compactedKeys: number };
}

const CONTROLLER_METRIC = 'claimkit_api_request_duration_seconds';
const APISERVER_METRIC = 'apiserver_request_duration_seconds';
const ETCD_METRIC = 'etcd_request_duration_seconds';

/**
 * One histogram's series in a scrape, summed by `key` (series with no key are dropped). One pass over
 * each of its _bucket, _sum and _count lines, not one per key: an API server's /metrics is megabytes.
 */
function seriesOf(
  text: string,
  metric: string,
  key: (l: Record<string, string>) => string | undefined,
): Series {
  const out: Series = new Map();
  const of = (labels: Record<string, string>) => {
    const k = key(labels);
    if (k === undefined) return undefined;
    let h = out.get(k);
    if (!h) {
      h = { buckets: new Map(), sum: 0, count: 0 };
      out.set(k, h);
    }
    return h;
  };
  for (const s of parseCounter(text, `${metric}_count`)) {
    const h = of(s.labels);
    if (h) h.count += s.value;
  }
  for (const s of parseCounter(text, `${metric}_sum`)) {
    const h = of(s.labels);
    if (h) h.sum += s.value;
  }
  for (const s of parseCounter(text, `${metric}_bucket`)) {
    const h = of(s.labels);
    if (!h) continue;
    const le = s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le);
    h.buckets.set(le, (h.buckets.get(le) ?? 0) + s.value);
  }
  return out;
}

/** The controller's requests other than watches (a watch's latency is its headers). */
export const controllerSeries = (text: string) =>
  seriesOf(text, CONTROLLER_METRIC, (l) =>
    l.verb && l.verb !== 'watch' ? `${l.verb} ${l.resource}` : undefined,
  );

/** Where the controller's own time went: GC pauses, reconciles, waits in its work queue. */
export const controllerTimeSeries = (text: string) =>
  new Map([
    ...seriesOf(text, 'nodejs_gc_duration_seconds', (l) => `gc ${l.kind}`),
    ...seriesOf(text, 'claimkit_reconcile_duration_seconds', (l) => `reconcile ${l.kind} ${l.result}`),
    ...seriesOf(text, 'workqueue_queue_duration_seconds', (l) => (l.name ? 'queue wait' : undefined)),
  ]);

/**
 * The controller's longest event-loop delay since its previous scrape (the longest of the shards'), in ms less the 10 ms sampling
 * interval the reading includes: a stall that holds every watch event and reconcile up shows here
 * and nowhere else (requests and queue waits are timed around it).
 */
export function eventLoopMaxMs(text: string): number | undefined {
  // Sharded, the scrape holds every shard's: the longest of them.
  const xs = parseCounter(text, 'nodejs_eventloop_lag_max_seconds').map((s) => s.value);
  return xs.length === 0 ? undefined : Math.max(0, Math.round(Math.max(...xs) * 1000 - 10));
}

/** The API server's requests on pods and claims other than watches. */
export const apiServerSeries = (text: string) =>
  seriesOf(text, APISERVER_METRIC, (l) =>
    (l.resource === 'pods' || l.resource === 'podclaims') && l.verb !== 'WATCH'
      ? `${l.verb} ${l.resource}${l.subresource ? `/${l.subresource}` : ''}`
      : undefined,
  );

/** etcd requests for pods and claims, by operation (the storage under the API server's writes). */
export const etcdSeries = (text: string) =>
  seriesOf(text, ETCD_METRIC, (l) => {
    // Labelled by `resource` (and `group`) in recent API servers, by `type` (the key prefix) before.
    const what = l.resource ?? l.type ?? '';
    return /^(\/registry\/)?(pods|podclaims)/.test(what) ? `${l.operation} ${what}` : undefined;
  });

/** What etcd itself reports: backend commits (seconds), compactions (a histogram in ms) and keys compacted. */
export function etcdServerSeries(text: string): NonNullable<Scrape['etcdServer']> {
  const all = () => true;
  return {
    commits: new Map([
      ['backend commit', histogramSnapshot(text, 'etcd_disk_backend_commit_duration_seconds', all)],
    ]),
    compactions: histogramSnapshot(
      text,
      'etcd_debugging_mvcc_db_compaction_total_duration_milliseconds',
      all,
    ),
    compactedKeys: parseCounter(text, 'etcd_debugging_mvcc_db_compaction_keys_total').reduce(
      (a, x) => a + x.value,
      0,
    ),
  };
}

/** etcd between two scrapes: its commits' latency, and the compactions that ran (how many, how long, how many keys). */
export function etcdServerBetween(
  a: NonNullable<Scrape['etcdServer']>,
  b: NonNullable<Scrape['etcdServer']>,
) {
  const compactions = histogramBetween(a.compactions, b.compactions);
  return {
    commits: seriesBetween(a.commits, b.commits)['backend commit'],
    compactions: compactions.count,
    compactionMs: Math.round(compactions.sum),
    compactedKeys: b.compactedKeys - a.compactedKeys,
  };
}

/** Each series' count, mean, p50 and p99 between two scrapes; series that saw nothing are left out. */
export function seriesBetween(before: Series, after: Series) {
  const out: Record<string, ReturnType<typeof histogramSummaryMs> & { over100Ms?: number }> = {};
  for (const [k, h] of after) {
    const w = histogramBetween(before.get(k) ?? { buckets: new Map(), sum: 0, count: 0 }, h);
    if (w.count === 0) continue;
    // How many took over 100 ms, where the histogram has that bound (all three servers' do).
    const under = w.buckets.get(0.1);
    out[k] = { ...histogramSummaryMs(w), ...(under !== undefined ? { over100Ms: w.count - under } : {}) };
  }
  return out;
}

interface CanaryPatch {
  sentAt: number;
  answeredAt?: number;
  seenAt?: number;
  failed?: string;
}

export interface WindowProbeOptions {
  windowMs: number;
  /** How often the canary is patched (default CANARY_MS). */
  canaryMs?: number;
  scrapeController: () => Promise<string>;
  scrapeApiServer: () => Promise<string>;
  /** etcd's own /metrics (a local control plane's; unset where the bench cannot reach etcd). */
  scrapeEtcd?: () => Promise<string>;
  /** Patches the canary pod's CANARY_ANNOTATION to `seq`. */
  patchCanary: (seq: number) => Promise<unknown>;
  say: (msg: string) => void;
}

export class WindowProbe {
  private readonly o: WindowProbeOptions;
  private readonly scrapes: Scrape[] = [];
  private readonly canary: CanaryPatch[] = [];
  private t0 = 0;
  private stopped = false;
  private timers: ReturnType<typeof setTimeout>[] = [];
  private pending: Promise<unknown>[] = [];

  constructor(o: WindowProbeOptions) {
    this.o = o;
  }

  /**
   * Scrapes once, then starts: returns t0 (performance.now()), from which a scrape follows at every
   * window boundary and a canary patch every CANARY_MS.
   */
  async start(): Promise<number> {
    await this.scrape();
    const t0 = performance.now();
    this.t0 = t0;
    const scrapeLoop = (w: number) => {
      if (this.stopped) return;
      this.timers.push(
        setTimeout(
          () => {
            this.pending.push(this.scrape());
            scrapeLoop(w + 1);
          },
          Math.max(0, t0 + w * this.o.windowMs - performance.now()),
        ),
      );
    };
    scrapeLoop(1);
    const canaryLoop = (seq: number) => {
      if (this.stopped) return;
      this.timers.push(
        setTimeout(
          () => {
            const p: CanaryPatch = { sentAt: performance.now() };
            this.canary[seq] = p;
            this.pending.push(
              this.o.patchCanary(seq).then(
                () => {
                  p.answeredAt = performance.now();
                },
                (e: Error) => {
                  p.failed = e.message;
                },
              ),
            );
            canaryLoop(seq + 1);
          },
          Math.max(0, t0 + seq * (this.o.canaryMs ?? CANARY_MS) - performance.now()),
        ),
      );
    };
    canaryLoop(0);
    return t0;
  }

  /** The bench's pod watch saw the canary carrying `seq` (later patches' events imply the earlier ones'). */
  canarySeen(seq: number, at: number): void {
    for (let i = seq; i >= 0; i--) {
      const p = this.canary[i];
      if (!p || p.seenAt !== undefined) break;
      p.seenAt = at;
    }
  }

  /** Stops scraping and patching, without a summary (the run failed). */
  cancel(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
  }

  /** Stops, with a last scrape, and summarises each window (index w: from t0 + w * windowMs). */
  async stop() {
    this.cancel();
    await this.scrape();
    await Promise.allSettled(this.pending);
    const scrapes = [...this.scrapes].sort((a, b) => a.at - b.at);
    const windows = [];
    for (let i = 0; i + 1 < scrapes.length; i++) {
      const a = scrapes[i]!;
      const b = scrapes[i + 1]!;
      const inWindow = this.canary.filter((p) => p && p.sentAt >= a.at && p.sentAt < b.at);
      const answered = inWindow.filter((p) => p.answeredAt !== undefined);
      windows.push({
        fromSecond: Math.round((a.at - this.t0) / 100) / 10,
        toSecond: Math.round((b.at - this.t0) / 100) / 10,
        controller: seriesBetween(a.controller, b.controller),
        controllerTime: seriesBetween(a.controllerTime, b.controllerTime),
        // A max since the previous scrape: the bench is the controller's only scraper while it runs.
        ...(b.eventLoopMaxMs !== undefined ? { eventLoopMaxMs: b.eventLoopMaxMs } : {}),
        apiServer: seriesBetween(a.apiServer, b.apiServer),
        etcd: seriesBetween(a.etcd, b.etcd),
        ...(a.etcdServer && b.etcdServer
          ? { etcdServer: etcdServerBetween(a.etcdServer, b.etcdServer) }
          : {}),
        canary: {
          patchMs: latencySummary(answered.map((p) => p.answeredAt! - p.sentAt)),
          // Answer -> its event on the bench's pod watch (negative: the event came first).
          watchAfterAnswerMs: latencySummary(
            answered.filter((p) => p.seenAt !== undefined).map((p) => p.seenAt! - p.answeredAt!),
          ),
          failed: inWindow.filter((p) => p.failed).length,
          neverSeen: answered.filter((p) => p.seenAt === undefined).length,
        },
      });
    }
    return windows;
  }

  private async scrape(): Promise<void> {
    const at = performance.now();
    try {
      const [c, s, e] = await Promise.all([
        this.o.scrapeController(),
        this.o.scrapeApiServer(),
        this.o.scrapeEtcd?.().catch(() => undefined),
      ]);
      const loop = eventLoopMaxMs(c);
      this.scrapes.push({
        ...(e !== undefined ? { etcdServer: etcdServerSeries(e) } : {}),
        ...(loop !== undefined ? { eventLoopMaxMs: loop } : {}),
        at,
        controller: controllerSeries(c),
        controllerTime: controllerTimeSeries(c),
        apiServer: apiServerSeries(s),
        etcd: etcdSeries(s),
      });
    } catch (e) {
      // A window without its scrape merges with the next; the run goes on.
      this.o.say(`window probe: a scrape failed (${(e as Error).message})`);
    }
  }
}

type ProbeWindow = Awaited<ReturnType<WindowProbe['stop']>>[number];

/**
 * One line per steady window: the claims' p99 and first stage beside the p99 of the bind's pod
 * patch as the controller and the API server timed it, the slowest canary patch and watch delivery.
 */
export function windowLine(w: {
  fromSecond: number;
  n: number;
  p99Ms: number;
  stagesP99Ms: { addedToPodLabelled: number };
  probe?: ProbeWindow;
}): string {
  const p = w.probe;
  const parts = [
    `${w.fromSecond}s: ${w.n} claims p99 ${w.p99Ms} ms (claim seen -> pod labelled ${w.stagesP99Ms.addedToPodLabelled})`,
  ];
  if (p) {
    const slowest = (series: Record<string, { p99Ms: number }>) =>
      Object.entries(series)
        .sort((a, b) => b[1].p99Ms - a[1].p99Ms)
        .slice(0, 2)
        .map(([k, v]) => `${k} ${v.p99Ms}`)
        .join(', ');
    parts.push(
      `controller p99: patch Pod ${p.controller['patch Pod']?.p99Ms ?? '-'}; slowest ${slowest(p.controller) || '-'}`,
      `API server p99: PATCH pods ${p.apiServer['PATCH pods']?.p99Ms ?? '-'}; slowest ${slowest(p.apiServer) || '-'}`,
      `etcd slowest ${slowest(p.etcd) || '-'}${p.etcdServer ? `; commits p99 ${p.etcdServer.commits?.p99Ms ?? '-'}, ${p.etcdServer.compactions} compaction(s) ${p.etcdServer.compactionMs} ms, ${p.etcdServer.compactedKeys} keys` : ''}`,
      `controller GC ${gcLine(p.controllerTime)}; queue waits over 100 ms ${p.controllerTime['queue wait']?.over100Ms ?? 0}; event loop stalled ${p.eventLoopMaxMs ?? '-'} ms at most`,
      `canary patch max ${p.canary.patchMs.maxMs}, watch after answer max ${p.canary.watchAfterAnswerMs.maxMs}${p.canary.neverSeen ? ` (${p.canary.neverSeen} never seen)` : ''}`,
    );
  }
  return parts.join(' | ');
}

/** GC in a window: the pauses' total and how many took over 100 ms, by kind. */
function gcLine(t: Record<string, { n: number; meanMs: number; over100Ms?: number }>): string {
  const kinds = Object.entries(t).filter(([k]) => k.startsWith('gc '));
  if (kinds.length === 0) return '-';
  return kinds
    .map(([k, v]) => `${k.slice(3)} ${Math.round(v.n * v.meanMs)} ms (${v.over100Ms ?? 0} over 100 ms)`)
    .join(', ');
}
