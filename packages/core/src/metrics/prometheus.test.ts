import { describe, expect, it } from 'vitest';
import { parseExposition } from '../testing/exposition.ts';
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

  it('one label set is one series whatever order its names are given in', () => {
    const c = new Counter('c_total', 'c');
    c.inc({ a: '1', b: '2' });
    c.inc({ b: '2', a: '1' }, 2);
    c.inc({ a: '1', b: '3' });
    expect(c.get({ b: '2', a: '1' })).toBe(3);
    expect(c.render().split('\n').slice(2)).toEqual(['c_total{a="1",b="2"} 3', 'c_total{a="1",b="3"} 1']);
    const h = new Histogram('h_seconds', 'h', [1]);
    h.observe(0.5, { x: 'a', y: 'b' });
    h.observe(2, { y: 'b', x: 'a' });
    expect(h.count({ x: 'a', y: 'b' })).toBe(2);
    expect(h.sum({ y: 'b', x: 'a' })).toBe(2.5);
  });

  it('keeps the labels it was given even when the caller mutates its object later', () => {
    const c = new Counter('m', 'M.');
    const labels = { a: '1' };
    c.inc(labels);
    labels.a = '2';
    expect(c.render()).toContain('m{a="1"} 1');
  });
});

describe('parseExposition (the strict reader tests of /metrics use)', () => {
  it('reads what the registry writes, escapes included', () => {
    const r = new Registry();
    r.register(new Counter('a_total', 'A \\ thing\nwith two lines.')).inc({ v: 'x"y\\z\nw' });
    r.register(new Histogram('h_seconds', 'H.', [0.1, 1])).observe(0.5, { k: 'v' });
    r.register(new Gauge('g', 'G.')).set(Number.NaN);
    const fams = parseExposition(r.render());
    expect(fams.map((f) => [f.name, f.type])).toEqual([
      ['a_total', 'counter'],
      ['h_seconds', 'histogram'],
      ['g', 'gauge'],
    ]);
    expect(fams[0]!.samples[0]!.labels).toEqual({ v: 'x"y\\z\nw' });
    expect(fams[1]!.samples.map((s) => s.name)).toEqual([
      'h_seconds_bucket',
      'h_seconds_bucket',
      'h_seconds_bucket',
      'h_seconds_sum',
      'h_seconds_count',
    ]);
  });

  it('rejects what Prometheus would not read', () => {
    const bad = [
      'x 1\n', // no TYPE
      '# TYPE x gauge\nx{a="b} 1\n', // unterminated value
      '# TYPE x gauge\nx{a="\\q"} 1\n', // bad escape
      '# TYPE x gauge\nx{1a="b"} 1\n', // bad label name
      '# TYPE x gauge\nx one\n', // bad value
      '# TYPE x gauge\nx 1\nx 2\n', // duplicate sample
      '# TYPE x gauge\n# TYPE x gauge\n', // second TYPE
      '# TYPE h histogram\nh_bucket 1\n', // bucket without le
      '# TYPE x gauge\nx 1', // no final newline
    ];
    for (const text of bad) expect(() => parseExposition(text), text).toThrow();
  });
});
