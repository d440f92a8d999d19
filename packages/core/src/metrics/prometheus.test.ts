import { describe, expect, it } from 'vitest';
import { Counter, Gauge, Histogram, Registry } from './prometheus.ts';

describe('Prometheus registry', () => {
  it('renders counters with sorted, escaped labels and sums them by filter', () => {
    const r = new Registry();
    const c = r.register(new Counter('x_total', 'Things.'));
    c.inc({ verb: 'get', code: '200' });
    c.inc({ code: '200', verb: 'get' }, 2);
    c.inc({ verb: 'patch', code: '409' });
    c.inc({ path: 'a"b\\c\nd' });
    expect(c.get({ verb: 'get', code: '200' })).toBe(3);
    expect(c.total({ code: '200' })).toBe(3);
    expect(c.total()).toBe(5);
    expect(r.render()).toBe(
      [
        '# HELP x_total Things.',
        '# TYPE x_total counter',
        'x_total{code="200",verb="get"} 3',
        'x_total{code="409",verb="patch"} 1',
        'x_total{path="a\\"b\\\\c\\nd"} 1',
        '',
      ].join('\n'),
    );
  });

  it('renders gauges that are set, or collected at scrape time, with +Inf and NaN spelled out', () => {
    const set = new Gauge('depth', 'Depth.');
    set.set(3);
    set.set(Number.POSITIVE_INFINITY, { q: 'b' });
    let phases = { Bound: 2 };
    const collected = new Gauge('claims', 'Claims.', () =>
      Object.entries(phases).map(([phase, v]) => ({ labels: { phase }, v })),
    );
    expect(set.render()).toBe('# HELP depth Depth.\n# TYPE depth gauge\ndepth 3\ndepth{q="b"} +Inf');
    expect(collected.get({ phase: 'Bound' })).toBe(2);
    phases = { Bound: 5 };
    expect(collected.render()).toContain('claims{phase="Bound"} 5');
    expect(new Gauge('n', 'N.', () => [{ labels: {}, v: Number.NaN }]).render()).toContain('n NaN');
  });

  it('renders cumulative histogram buckets, sum and count per series', () => {
    const h = new Histogram('d_seconds', 'Durations.', [0.1, 1]);
    h.observe(0.05, { kind: 'A' });
    h.observe(0.5, { kind: 'A' });
    h.observe(5, { kind: 'A' });
    expect(h.count({ kind: 'A' })).toBe(3);
    expect(h.render().split('\n')).toEqual([
      '# HELP d_seconds Durations.',
      '# TYPE d_seconds histogram',
      'd_seconds_bucket{kind="A",le="0.1"} 1',
      'd_seconds_bucket{kind="A",le="1"} 2',
      'd_seconds_bucket{kind="A",le="+Inf"} 3',
      'd_seconds_sum{kind="A"} 5.55',
      'd_seconds_count{kind="A"} 3',
    ]);
  });

  it('refuses buckets that do not ascend and a name registered twice', () => {
    expect(() => new Histogram('h', 'H.', [1, 1])).toThrow(/ascend/);
    const r = new Registry();
    r.register(new Counter('c', 'C.'));
    expect(() => r.register(new Counter('c', 'C again.'))).toThrow(/twice/);
  });

  it('names its metrics in registration order, histograms without their series suffixes', () => {
    const r = new Registry();
    r.register(new Counter('b_total', 'B.'));
    r.register(new Histogram('a_seconds', 'A.', [1]));
    r.register(new Gauge('c', 'C.'));
    expect(r.names()).toEqual(['b_total', 'a_seconds', 'c']);
  });

  it('keeps the labels it was given even when the caller mutates its object later', () => {
    const c = new Counter('m', 'M.');
    const labels = { a: '1' };
    c.inc(labels);
    labels.a = '2';
    expect(c.render()).toContain('m{a="1"} 1');
  });
});
