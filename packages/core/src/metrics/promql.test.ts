import { describe, expect, it } from 'vitest';
import { metricNames, seriesNames } from './promql.ts';

describe('PromQL metric names', () => {
  it('are the selected series, not functions, keywords, labels, strings, ranges or variables', () => {
    expect(
      seriesNames(
        'histogram_quantile(0.99, sum by (namespace, pool, le) (rate(a_seconds_bucket{namespace=~"$namespace", pool="x{y}"}[$__rate_interval])))',
      ),
    ).toEqual(['a_seconds_bucket']);
    expect(
      seriesNames('max(b) without (instance) / on (pool) group_left (state) c offset 5m > bool 0.5 and d'),
    ).toEqual(['b', 'c', 'd']);
    expect(seriesNames('max by (pool) (g) + topk without (a) (3, h) + count(i)')).toEqual(['g', 'h', 'i']);
    expect(seriesNames('(max(leader) or vector(0)) < 1 unless absent(up) * group_left e')).toEqual([
      'leader',
      'up',
      'e',
    ]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's ${var}, not a JS template.
    expect(seriesNames('sum(rate(x_total[5m:30s])) by (job) + ${var} * 1e3 + [[old]]')).toEqual(['x_total']);
    expect(seriesNames("label_replace(f, 'dst', '$1', \"src\", `(.*)`)")).toEqual(['f']);
  });

  it("strip a histogram's series suffixes", () => {
    expect(metricNames('rate(h_bucket[1m]) + h_sum / h_count + g')).toEqual(['h', 'g']);
  });
});
