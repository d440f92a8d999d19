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

/**
 * Series by label set. The canonical key is labelText (sorted, escaped); a metric updated on every
 * API request or reconcile finds its series by a cheaper key first (names and values in the order
 * given, unescaped), so the hot path neither sorts nor escapes. Both keys lead to one series.
 */
class SeriesTable<T extends { labels: Labels }> {
  private readonly canonical = new Map<string, T>();
  private readonly fast = new Map<string, T>();

  find(labels: Labels): T | undefined {
    return this.fast.get(fastKey(labels)) ?? this.canonical.get(labelText(labels));
  }

  /** The series for `labels`, made by `create` the first time. */
  upsert(labels: Labels, create: () => T): T {
    const fk = fastKey(labels);
    let cur = this.fast.get(fk);
    if (cur) return cur;
    const k = labelText(labels);
    cur = this.canonical.get(k);
    if (!cur) {
      cur = create();
      this.canonical.set(k, cur);
    }
    this.fast.set(fk, cur);
    return cur;
  }

  values(): IterableIterator<T> {
    return this.canonical.values();
  }
}

function fastKey(labels: Labels): string {
  let k = '';
  for (const name in labels) k += `${name}\u0001${labels[name]}\u0002`;
  return k;
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
  private readonly values = new SeriesTable<{ labels: Labels; v: number }>();
  readonly name: string;
  readonly help: string;
  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }
  inc(labels: Labels = {}, by = 1): void {
    this.values.upsert(labels, () => ({ labels: { ...labels }, v: 0 })).v += by;
  }
  get(labels: Labels = {}): number {
    return this.values.find(labels)?.v ?? 0;
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
  /** Stops exporting a set series. */
  remove(labels: Labels = {}): void {
    this.values.delete(labelText(labels));
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
  private readonly values = new SeriesTable<{ labels: Labels; counts: number[]; sum: number; n: number }>();
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
    const cur = this.values.upsert(labels, () => ({
      labels: { ...labels },
      counts: this.buckets.map(() => 0),
      sum: 0,
      n: 0,
    }));
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) cur.counts[i]!++;
    cur.sum += v;
    cur.n++;
  }
  count(labels: Labels = {}): number {
    return this.values.find(labels)?.n ?? 0;
  }
  sum(labels: Labels = {}): number {
    return this.values.find(labels)?.sum ?? 0;
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
