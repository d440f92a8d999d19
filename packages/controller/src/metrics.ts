// A small Prometheus registry (text exposition format 0.0.4): counters, gauges (set or collected
// at scrape time) and histograms, each with labels.
type Labels = Record<string, string>;

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labelText = (l: Labels) => {
  const ks = Object.keys(l).sort();
  return ks.length === 0 ? '' : `{${ks.map((k) => `${k}="${esc(l[k]!)}"`).join(',')}}`;
};
const keyOf = (l: Labels) => labelText(l);

interface Metric {
  render(): string;
}

export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; v: number }>();
  readonly name: string;
  readonly help: string;
  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }
  inc(labels: Labels = {}, by = 1): void {
    const k = keyOf(labels);
    const cur = this.values.get(k);
    if (cur) cur.v += by;
    else this.values.set(k, { labels, v: by });
  }
  get(labels: Labels = {}): number {
    return this.values.get(keyOf(labels))?.v ?? 0;
  }
  total(filter: Partial<Labels> = {}): number {
    let n = 0;
    for (const { labels, v } of this.values.values()) {
      if (Object.entries(filter).every(([k, want]) => labels[k] === want)) n += v;
    }
    return n;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, v } of this.values.values()) lines.push(`${this.name}${labelText(labels)} ${v}`);
    return lines.join('\n');
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, { labels: Labels; v: number }>();
  readonly name: string;
  readonly help: string;
  private readonly collect: (() => { labels: Labels; v: number }[]) | undefined;
  constructor(name: string, help: string, collect?: () => { labels: Labels; v: number }[]) {
    this.name = name;
    this.help = help;
    this.collect = collect;
  }
  set(v: number, labels: Labels = {}): void {
    this.values.set(keyOf(labels), { labels, v });
  }
  get(labels: Labels = {}): number {
    if (this.collect) return this.collect().find((x) => keyOf(x.labels) === keyOf(labels))?.v ?? 0;
    return this.values.get(keyOf(labels))?.v ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    const vs = this.collect ? this.collect() : [...this.values.values()];
    for (const { labels, v } of vs) lines.push(`${this.name}${labelText(labels)} ${v}`);
    return lines.join('\n');
  }
}

export class Histogram implements Metric {
  private readonly values = new Map<string, { labels: Labels; counts: number[]; sum: number; n: number }>();
  readonly name: string;
  readonly help: string;
  readonly buckets: number[];
  constructor(name: string, help: string, buckets: number[]) {
    this.name = name;
    this.help = help;
    this.buckets = buckets;
  }
  observe(v: number, labels: Labels = {}): void {
    const k = keyOf(labels);
    let cur = this.values.get(k);
    if (!cur) {
      cur = { labels, counts: this.buckets.map(() => 0), sum: 0, n: 0 };
      this.values.set(k, cur);
    }
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) cur.counts[i]!++;
    cur.sum += v;
    cur.n++;
  }
  count(labels: Labels = {}): number {
    return this.values.get(keyOf(labels))?.n ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, n } of this.values.values()) {
      this.buckets.forEach((b, i) => {
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: String(b) })} ${counts[i]}`);
      });
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${n}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${sum}`);
      lines.push(`${this.name}_count${labelText(labels)} ${n}`);
    }
    return lines.join('\n');
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];
  register<M extends Metric>(m: M): M {
    this.metrics.push(m);
    return m;
  }
  render(): string {
    return `${this.metrics.map((m) => m.render()).join('\n')}\n`;
  }
}

/** The controller's metrics. */
export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles = this.registry.register(
    new Counter('claimkit_reconcile_total', 'Reconciles by kind and result (success, requeue, error).'),
  );
  readonly reconcileSeconds = this.registry.register(
    new Histogram(
      'claimkit_reconcile_duration_seconds',
      'Reconcile duration by kind and result.',
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
  );
  readonly queueDepth = this.registry.register(
    new Gauge('claimkit_workqueue_depth', 'Keys ready in the work queue.'),
  );
  readonly queueRetries = this.registry.register(
    new Counter('claimkit_workqueue_retries_total', 'Rate-limited re-adds after errors.'),
  );
  readonly apiRequests = this.registry.register(
    new Counter('claimkit_api_requests_total', 'Kubernetes API requests by verb, resource and HTTP code.'),
  );
  readonly takeovers = this.registry.register(
    new Counter(
      'claimkit_capture_takeovers_total',
      'Capture claims taken over (TakenOver events) by reason.',
    ),
  );
  readonly events = this.registry.register(
    new Counter('claimkit_events_total', 'Kubernetes Events recorded by type and reason.'),
  );
  readonly sweeps = this.registry.register(
    new Counter('claimkit_capture_sweeps_total', 'Capture recovery sweeps by result.'),
  );
  readonly leader = this.registry.register(new Gauge('claimkit_leader', '1 while this replica leads.'));
  /** Set by the manager: PodClaims by phase from its cache. */
  claimPhases: () => Record<string, number> = () => ({});
  readonly claimsByPhase = this.registry.register(
    new Gauge('claimkit_podclaims', 'PodClaims by phase (from the informer cache).', () =>
      Object.entries(this.claimPhases()).map(([phase, v]) => ({ labels: { phase }, v })),
    ),
  );
}
