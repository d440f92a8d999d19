// Defensive readers for untrusted JSON: every accessor returns undefined instead of throwing.

export type Json = Record<string, unknown>;

export function obj(v: unknown): Json | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

export function field(v: unknown, ...path: string[]): unknown {
  let cur: unknown = v;
  for (const p of path) {
    const o = obj(cur);
    if (o === undefined || !Object.hasOwn(o, p)) return undefined;
    cur = o[p];
  }
  return cur;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A string field where absent, null and "" all mean "not set". */
export function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined;
}

export function stringMap(v: unknown): Record<string, string> | undefined {
  const o = obj(v);
  if (o === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(o)) if (typeof x === 'string') out[k] = x;
  return out;
}

export function labelsOf(o: unknown): Record<string, string> {
  return stringMap(field(o, 'metadata', 'labels')) ?? {};
}

export function annotationsOf(o: unknown): Record<string, string> {
  return stringMap(field(o, 'metadata', 'annotations')) ?? {};
}

/** Structural equality for JSON values, iterative so hostile nesting cannot overflow the stack. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x)) {
      const ya = y as unknown[];
      if (x.length !== ya.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], ya[i]]);
      continue;
    }
    const xo = x as Json;
    const yo = y as Json;
    const xk = Object.keys(xo).filter((k) => xo[k] !== undefined);
    const yk = Object.keys(yo).filter((k) => yo[k] !== undefined);
    if (xk.length !== yk.length) return false;
    for (const k of xk) {
      if (!Object.hasOwn(yo, k)) return false;
      stack.push([xo[k], yo[k]]);
    }
  }
  return true;
}

export function labelPath(key: string): string {
  return `metadata.labels[${key}]`;
}

export function annotationPath(key: string): string {
  return `metadata.annotations[${key}]`;
}
