// A small YAML emitter for JSON data (block style, deterministic), enough for manifests.
// Strings are written plain when YAML would read them back as the same string, else JSON-quoted
// (a JSON string is a valid YAML double-quoted scalar).

const RESERVED = /^(true|false|yes|no|on|off|y|n|null|~|-?\.inf|\.nan)$/i;
const NUMBERISH = /^[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?$|^0[xob]/i;
const PLAIN_SAFE = /^[A-Za-z0-9_./()][A-Za-z0-9 _./(){}$'=<>+,;:-]*$/;

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = String(v);
  if (s === '' || RESERVED.test(s) || NUMBERISH.test(s) || !PLAIN_SAFE.test(s) || s.endsWith(' ')) {
    return JSON.stringify(s);
  }
  if (s.includes(': ') || s.includes(' #') || s.endsWith(':')) return JSON.stringify(s);
  return s;
}

function key(k: string): string {
  return scalar(k);
}

function isEmptyCollection(v: unknown): boolean {
  return (
    (Array.isArray(v) && v.length === 0) ||
    (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0)
  );
}

function emit(v: unknown, indent: string, out: string[], prefix: string): void {
  if (Array.isArray(v)) {
    if (v.length === 0) {
      out.push(`${prefix}[]`);
      return;
    }
    for (const item of v) {
      if (item !== null && typeof item === 'object' && !isEmptyCollection(item)) {
        const lines: string[] = [];
        emit(item, `${indent}  `, lines, '');
        // The first line of a nested block goes after the dash.
        out.push(`${indent}- ${lines[0]!.trimStart()}`);
        out.push(...lines.slice(1));
      } else {
        out.push(`${indent}- ${inline(item)}`);
      }
    }
    return;
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    if (entries.length === 0) {
      out.push(`${prefix}{}`);
      return;
    }
    for (const [k, x] of entries) {
      if (x !== null && typeof x === 'object' && !isEmptyCollection(x)) {
        out.push(`${indent}${key(k)}:`);
        emit(x, Array.isArray(x) ? indent : `${indent}  `, out, '');
      } else {
        out.push(`${indent}${key(k)}: ${inline(x)}`);
      }
    }
    return;
  }
  out.push(`${prefix}${scalar(v)}`);
}

function inline(v: unknown): string {
  if (Array.isArray(v)) return '[]';
  if (v !== null && typeof v === 'object') return '{}';
  return scalar(v);
}

/** One YAML document for a JSON value, ending in a newline. */
export function toYaml(v: unknown): string {
  const out: string[] = [];
  if (v === null || typeof v !== 'object' || isEmptyCollection(v)) return `${inline(v)}\n`;
  emit(v, '', out, '');
  return `${out.join('\n')}\n`;
}
