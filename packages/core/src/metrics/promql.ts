// The metric names a PromQL expression reads, so tests can hold the dashboard and the alert rules to
// the names the controller and the webhook really export. A tokenizer, not a full parser: it drops
// strings, label matchers, ranges and Grafana variables, then every identifier that is not a
// function, an aggregation, a keyword or a label list (`by (...)`, `on (...)`, ...) is a metric name.

/** Keywords followed by a parenthesized list of label names (not metric names). */
const LABEL_LIST = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
/** Words that are neither metric names nor followed by `(`. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2', 'start', 'end']);
/** Aggregations, which may put their `by (...)` before the parenthesis: `sum by (pool) (x)`. */
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);
/** Suffixes a histogram's series carry; the metric is the name before them. */
const HISTOGRAM_SUFFIX = /_(bucket|sum|count)$/;

/** Removes every balanced `open ... close` block (their contents are never metric names). */
function dropBlocks(s: string, open: string, close: string): string {
  let out = '';
  let depth = 0;
  for (const ch of s) {
    if (ch === open) depth++;
    else if (ch === close && depth > 0) depth--;
    else if (depth === 0) out += ch;
  }
  if (depth !== 0) throw new Error(`unbalanced ${open}${close} in PromQL`);
  return out;
}

/** The series names an expression selects (histogram series as written, e.g. `x_bucket`). */
export function seriesNames(expr: string): string[] {
  let s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    // Grafana's variables: $var, ${var}, ${var:format}, [[var]], $__rate_interval.
    .replace(/\$\{[^}]*\}|\$\w+|\[\[\w+\]\]/g, ' 1 ');
  s = dropBlocks(dropBlocks(s, '{', '}'), '[', ']');
  const tokens: string[] = s.match(/\d[\w.]*|[A-Za-z_:][\w:]*|\(|\)|[^\s\w()]+/g) ?? [];
  const names: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!/^[A-Za-z_:]/.test(t)) continue;
    const next = tokens[i + 1];
    if (LABEL_LIST.has(t.toLowerCase())) {
      // A label list may be absent (group_left with no labels): skip it only when there.
      if (next === '(') {
        const close = tokens.indexOf(')', i + 1);
        if (close < 0) throw new Error(`unclosed label list after ${t} in PromQL: ${expr}`);
        i = close;
      }
      continue;
    }
    if (KEYWORDS.has(t.toLowerCase()) || next === '(') continue;
    if (AGGREGATIONS.has(t.toLowerCase()) && LABEL_LIST.has(next?.toLowerCase() ?? '')) continue;
    names.push(t);
  }
  return [...new Set(names)];
}

/** The metric names an expression reads: series names with a histogram's suffixes removed. */
export function metricNames(expr: string): string[] {
  return [...new Set(seriesNames(expr).map((n) => n.replace(HISTOGRAM_SUFFIX, '')))];
}
