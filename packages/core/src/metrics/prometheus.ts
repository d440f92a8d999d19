// A small Prometheus registry (text exposition format 0.0.4): counters, gauges (set, or collected at
// scrape time) and histograms, each with labels. Runtime-free, so the controller (Node) and the
// webhook (Node and Deno, behind a Web-standard handler) share it.
export type Labels = Record<string, string>;

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** `{a="1",b="2"}` with sorted names (then `le`, last as client libraries write it), or ''. */
function labelText(labels: Labels, le?: string): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escapeLabel(labels[k]!)}"`);
  if (le !== undefined) pairs.push(`le="${le}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** Sample values as Prometheus writes them (+Inf, -Inf, NaN). */
function formatValue(n: number): string {
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  return Number.isNaN(n) ? 'NaN' : String(n);
}

export interface Metric {
  readonly name: string;
  render(): string;
}

function header(m: { name: string; help: string }, type: string): string[] {
  return [
    `# HELP ${m.name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`,
    `# TYPE ${m.name} ${type}`,
  ];
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
    const k = labelText(labels);
    const cur = this.values.get(k);
    if (cur) cur.v += by;
    else this.values.set(k, { labels: { ...labels }, v: by });
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelText(labels))?.v ?? 0;
  }
  /** The sum over every series whose labels include `filter`. */
  total(filter: Partial<Labels> = {}): number {
    let n = 0;
    for (const { labels, v } of this.values.values()) {
      if (Object.entries(filter).every(([k, want]) => labels[k] === want)) n += v;
    }
    return n;
  }
  render(): string {
    const lines = header(this, 'counter');
    for (const { labels, v } of this.values.values())
      lines.push(`${this.name}${labelText(labels)} ${formatValue(v)}`);
    return lines.join('\n');
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, { labels: Labels; v: number }>();
  readonly name: string;
  readonly help: string;
  private readonly collect: (() => { labels: Labels; v: number }[]) | undefined;
  private readonly type: 'gauge' | 'counter';
  /**
   * With `collect`, the series are read at scrape time and `set` is not used. `type` 'counter' is for
   * a collected value that only grows (process_cpu_seconds_total).
   */
  constructor(
    name: string,
    help: string,
    collect?: () => { labels: Labels; v: number }[],
    type: 'gauge' | 'counter' = 'gauge',
  ) {
    this.name = name;
    this.help = help;
    this.collect = collect;
    this.type = type;
  }
  set(v: number, labels: Labels = {}): void {
    this.values.set(labelText(labels), { labels: { ...labels }, v });
  }
  /** Adds `by` (negative to subtract) to a set series. */
  add(by: number, labels: Labels = {}): void {
    this.set(this.get(labels) + by, labels);
  }
  get(labels: Labels = {}): number {
    const k = labelText(labels);
    if (this.collect) return this.collect().find((x) => labelText(x.labels) === k)?.v ?? 0;
    return this.values.get(k)?.v ?? 0;
  }
  render(): string {
    const lines = header(this, this.type);
    const series = this.collect ? this.collect() : [...this.values.values()];
    for (const { labels, v } of series) lines.push(`${this.name}${labelText(labels)} ${formatValue(v)}`);
    return lines.join('\n');
  }
}

export class Histogram implements Metric {
  private readonly values = new Map<string, { labels: Labels; counts: number[]; sum: number; n: number }>();
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];
  /** `buckets`: upper bounds, ascending; +Inf is implied. */
  constructor(name: string, help: string, buckets: readonly number[]) {
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]! > buckets[i - 1]!)) throw new Error(`${name}: histogram buckets must ascend`);
    }
    this.name = name;
    this.help = help;
    this.buckets = [...buckets];
  }
  observe(v: number, labels: Labels = {}): void {
    const k = labelText(labels);
    let cur = this.values.get(k);
    if (!cur) {
      cur = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, n: 0 };
      this.values.set(k, cur);
    }
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) cur.counts[i]!++;
    cur.sum += v;
    cur.n++;
  }
  count(labels: Labels = {}): number {
    return this.values.get(labelText(labels))?.n ?? 0;
  }
  sum(labels: Labels = {}): number {
    return this.values.get(labelText(labels))?.sum ?? 0;
  }
  render(): string {
    const lines = header(this, 'histogram');
    for (const { labels, counts, sum, n } of this.values.values()) {
      this.buckets.forEach((b, i) => {
        lines.push(`${this.name}_bucket${labelText(labels, formatValue(b))} ${counts[i]}`);
      });
      lines.push(`${this.name}_bucket${labelText(labels, '+Inf')} ${n}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${formatValue(sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${n}`);
    }
    return lines.join('\n');
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];
  private readonly beforeRender: (() => void)[] = [];
  /** Runs `fn` at the start of every render (one snapshot shared by several collected gauges). */
  onRender(fn: () => void): void {
    this.beforeRender.push(fn);
  }
  register<M extends Metric>(m: M): M {
    if (this.metrics.some((x) => x.name === m.name)) throw new Error(`metric ${m.name} registered twice`);
    this.metrics.push(m);
    return m;
  }
  /** The names of the registered metrics, in registration order (a histogram's without suffixes). */
  names(): string[] {
    return this.metrics.map((m) => m.name);
  }
  /** The text exposition of every registered metric. */
  render(): string {
    for (const fn of this.beforeRender) fn();
    return `${this.metrics.map((m) => m.render()).join('\n')}\n`;
  }
}
