// A strict reader of the Prometheus text exposition format (0.0.4), for tests of every /metrics:
// each line is a HELP, a TYPE or a sample; HELP and TYPE come once per family, before its samples;
// names and label names are valid, label values are escaped, values are numbers; a histogram's
// samples are its _bucket (with le), _sum and _count. Returns the families, or throws on the first
// line that is not valid.
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const VALUE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export interface ExpositionSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ExpositionFamily {
  name: string;
  type: string;
  help: string;
  samples: ExpositionSample[];
}

/** `{a="x",b="y\"z"}` -> labels; throws on bad names, unescaped quotes or unknown escapes. */
function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`label without '=': ${line}`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${JSON.stringify(name)}: ${line}`);
    if (name in labels) throw new Error(`label ${name} twice: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`label value not quoted: ${line}`);
    let v = '';
    let j = eq + 2;
    for (;;) {
      const c = text[j];
      if (c === undefined) throw new Error(`unterminated label value: ${line}`);
      if (c === '"') break;
      if (c === '\n') throw new Error(`raw newline in a label value: ${line}`);
      if (c === '\\') {
        const e = text[j + 1];
        if (e === 'n') v += '\n';
        else if (e === '\\' || e === '"') v += e;
        else throw new Error(`bad escape \\${e} in a label value: ${line}`);
        j += 2;
        continue;
      }
      v += c;
      j++;
    }
    labels[name] = v;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ',') throw new Error(`expected ',' between labels: ${line}`);
      i++;
    }
  }
  return labels;
}

const sampleValue = (s: string) => (s === '+Inf' ? Infinity : s === '-Inf' ? -Infinity : Number(s));

/** The family a sample belongs to (a histogram's _bucket/_sum/_count name their family). */
function familyOf(name: string, families: Map<string, ExpositionFamily>): ExpositionFamily | undefined {
  const f = families.get(name);
  if (f) return f;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const h = m ? families.get(m[1]!) : undefined;
  return h && (h.type === 'histogram' || (h.type === 'summary' && m![2] !== 'bucket')) ? h : undefined;
}

export function parseExposition(text: string): ExpositionFamily[] {
  if (text !== '' && !text.endsWith('\n')) throw new Error('exposition does not end with a newline');
  const families = new Map<string, ExpositionFamily>();
  const seenSamples = new Set<string>();
  const declare = (name: string, line: string) => {
    if (!NAME.test(name)) throw new Error(`bad metric name ${JSON.stringify(name)}: ${line}`);
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', help: '', samples: [] };
      families.set(name, f);
    }
    if (f.samples.length > 0) throw new Error(`HELP/TYPE after samples of ${name}: ${line}`);
    return f;
  };
  const helpSeen = new Set<string>();
  const typeSeen = new Set<string>();
  for (const line of text.split('\n').slice(0, -1)) {
    if (line.startsWith('# HELP ')) {
      const [, name = '', help = ''] = /^# HELP (\S+) ?(.*)$/.exec(line) ?? [];
      if (helpSeen.has(name)) throw new Error(`second HELP for ${name}`);
      helpSeen.add(name);
      if (/\\[^\\n]/.test(help.replace(/\\\\/g, ''))) throw new Error(`bad escape in HELP: ${line}`);
      declare(name, line).help = help;
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [, name = '', type = ''] = /^# TYPE (\S+) (\S+)$/.exec(line) ?? [];
      if (!TYPES.has(type)) throw new Error(`bad TYPE: ${line}`);
      if (typeSeen.has(name)) throw new Error(`second TYPE for ${name}`);
      typeSeen.add(name);
      declare(name, line).type = type;
      continue;
    }
    if (line.startsWith('#') || line.trim() === '')
      throw new Error(`unexpected line: ${JSON.stringify(line)}`);
    const m = /^([^{\s]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample: ${JSON.stringify(line)}`);
    const [, name = '', labelText = '', value = ''] = m;
    if (!NAME.test(name)) throw new Error(`bad metric name ${JSON.stringify(name)}: ${line}`);
    if (!VALUE.test(value)) throw new Error(`bad value ${JSON.stringify(value)}: ${line}`);
    const labels = parseLabels(labelText, line);
    const f = familyOf(name, families);
    if (!f || !typeSeen.has(f.name)) throw new Error(`sample before its TYPE line: ${line}`);
    if (f.type === 'histogram') {
      if (name === f.name) throw new Error(`histogram sample without a suffix: ${line}`);
      if (name.endsWith('_bucket') !== 'le' in labels) throw new Error(`le only on buckets: ${line}`);
    }
    const id = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seenSamples.has(id)) throw new Error(`duplicate sample: ${line}`);
    seenSamples.add(id);
    f.samples.push({ name, labels, value: sampleValue(value) });
  }
  return [...families.values()];
}
