// A small Prometheus registry (text exposition format 0.0.4): counters, gauges and histograms with
// labels. Runtime-free, so the app stays a pure Web-standard handler.

type Labels = Record<string, string>;

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escapeLabel(labels[k]!)}"`)
    .join(',');
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function fmt(n: number): string {
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  return Number.isNaN(n) ? 'NaN' : String(n);
}

interface Metric {
  render(): string;
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  readonly name: string;
  readonly help: string;
  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }
  inc(labels: Labels = {}, by = 1): void {
    const k = labelKey(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${fmt(v)}`);
    return lines.join('\n');
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, () => number>();
  readonly name: string;
  readonly help: string;
  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }
  /** The value is read at scrape time. */
  collect(fn: () => number, labels: Labels = {}): void {
    this.values.set(labelKey(labels), fn);
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [k, fn] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${fmt(fn())}`);
    return lines.join('\n');
  }
}

export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1,
];

export class Histogram implements Metric {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];
  constructor(name: string, help: string, buckets: readonly number[] = LATENCY_BUCKETS) {
    this.name = name;
    this.help = help;
    this.buckets = buckets;
  }
  observe(value: number, labels: Labels = {}): void {
    const k = labelKey(labels);
    let s = this.series.get(k);
    if (s === undefined) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  count(labels: Labels = {}): number {
    return this.series.get(labelKey(labels))?.count ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const sep = k ? `${k},` : '';
      this.buckets.forEach((b, i) => {
        lines.push(`${this.name}_bucket{${sep}le="${fmt(b)}"} ${s.counts[i]}`);
      });
      lines.push(`${this.name}_bucket{${sep}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${k ? `{${k}}` : ''} ${fmt(s.sum)}`);
      lines.push(`${this.name}_count${k ? `{${k}}` : ''} ${s.count}`);
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

/** The webhook's own metrics. */
export interface WebhookMetrics {
  registry: Registry;
  requests: Counter;
  latency: Histogram;
  violations: Counter;
}

export function createWebhookMetrics(registry = new Registry()): WebhookMetrics {
  return {
    registry,
    requests: registry.register(
      new Counter(
        'claimkit_webhook_requests_total',
        'Admission requests by path and result (allowed, denied, bad_request, error).',
      ),
    ),
    latency: registry.register(
      new Histogram(
        'claimkit_webhook_request_duration_seconds',
        'Time to answer an admission request, by path.',
      ),
    ),
    violations: registry.register(
      new Counter('claimkit_webhook_violations_total', 'Violations found, by path and field.'),
    ),
  };
}
