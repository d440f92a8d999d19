// Hand-written argument parsing, kubectl style: `--flag value`, `--flag=value`, `-n value`,
// `-nvalue`, boolean flags, `--` ends flags. Errors are UsageError: one line, exit code 2.

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec {
  short?: string;
  type: 'string' | 'boolean';
}

export type FlagSpecs = Record<string, FlagSpec>;

export interface Parsed {
  flags: Record<string, string | boolean>;
  positionals: string[];
}

/** Flags every cluster command takes (kubectl's names). */
export const CLUSTER_FLAGS: FlagSpecs = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { short: 'n', type: 'string' },
};

export const GLOBAL_FLAGS: FlagSpecs = {
  help: { short: 'h', type: 'boolean' },
  verbose: { short: 'v', type: 'boolean' },
};

export function parseFlags(argv: string[], specs: FlagSpecs): Parsed {
  const all = { ...GLOBAL_FLAGS, ...specs };
  const byShort = new Map<string, string>();
  for (const [name, s] of Object.entries(all)) if (s.short) byShort.set(s.short, name);
  const flags: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    let shown = a;
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      inline = eq < 0 ? undefined : a.slice(eq + 1);
      shown = `--${name}`;
      if (!(name in all)) throw new UsageError(`unknown flag: ${shown}`);
    } else if (a.startsWith('-') && a.length > 1 && !/^-\d/.test(a)) {
      const ch = a[1]!;
      name = byShort.get(ch);
      shown = `-${ch}`;
      if (!name) throw new UsageError(`unknown shorthand flag: '${ch}' in ${a}`);
      if (a.length > 2) inline = a[2] === '=' ? a.slice(3) : a.slice(2);
    } else {
      positionals.push(a);
      continue;
    }
    const spec = all[name]!;
    if (spec.type === 'boolean') {
      if (inline === undefined) flags[name] = true;
      else if (inline === 'true' || inline === 'false') flags[name] = inline === 'true';
      else throw new UsageError(`invalid value for ${shown}: ${JSON.stringify(inline)} (want true or false)`);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`flag needs an argument: ${shown}`);
    }
    flags[name] = value;
  }
  return { flags, positionals };
}

export const str = (p: Parsed, name: string): string | undefined =>
  typeof p.flags[name] === 'string' ? (p.flags[name] as string) : undefined;

export const bool = (p: Parsed, name: string): boolean => p.flags[name] === true;

export function int(p: Parsed, name: string, dflt: number, min = 0): number {
  const v = str(p, name);
  if (v === undefined) return dflt;
  if (!/^-?\d+$/.test(v) || Number(v) < min) {
    throw new UsageError(`invalid value for --${name}: ${JSON.stringify(v)} (want an integer >= ${min})`);
  }
  return Number(v);
}

export function num(p: Parsed, name: string, dflt: number, min: number, max: number): number {
  const v = str(p, name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(
      `invalid value for --${name}: ${JSON.stringify(v)} (want a number from ${min} to ${max})`,
    );
  }
  return n;
}

/** Go-style durations as kubectl takes them: `90s`, `5m`, `1h30m`, `250ms`, `0`. */
export function parseDuration(s: string, flag: string): number {
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(re)) {
    if (m.index !== consumed) break;
    total += Number(m[1]) * units[m[2]!]!;
    consumed += m[0].length;
  }
  if (consumed !== s.length || s.length === 0) {
    throw new UsageError(`invalid duration for --${flag}: ${JSON.stringify(s)} (e.g. 90s, 5m, 1h30m)`);
  }
  return total;
}

export function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`invalid ${what}: ${JSON.stringify(value)} (want one of: ${allowed.join(', ')})`);
  }
  return value as T;
}
