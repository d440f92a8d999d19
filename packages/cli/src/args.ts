// Argument parsing, kubectl style: `--flag value`, `--flag=value`, `-n value`, `-nvalue`, boolean
// flags, `--` ends flags. The tokenizer, the duration syntax and the usage-error wording are core's
// (@claimkit/core/options), as in every claimkit binary. Errors are UsageError: one line, exit code 2.
import { parseDuration, tokenize, UsageError } from '@claimkit/core/options';

export { UsageError } from '@claimkit/core/options';

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
  const table = Object.fromEntries(
    Object.entries(all).map(([name, s]) => [
      name,
      {
        type: s.type === 'boolean' ? ('bool' as const) : ('string' as const),
        ...(s.short ? { short: s.short } : {}),
      },
    ]),
  );
  const t = tokenize(table, argv, { positionals: true });
  if (t.problems.length > 0) throw new UsageError(t.problems);
  return { flags: t.flags, positionals: t.positionals };
}

export const str = (p: Parsed, name: string): string | undefined =>
  typeof p.flags[name] === 'string' ? (p.flags[name] as string) : undefined;

export const bool = (p: Parsed, name: string): boolean => p.flags[name] === true;

export function int(p: Parsed, name: string, dflt: number, min = 0): number {
  const v = str(p, name);
  if (v === undefined) return dflt;
  if (!/^-?\d+$/.test(v) || Number(v) < min) {
    throw new UsageError(`--${name}: want an integer >= ${min}, got ${JSON.stringify(v)}`);
  }
  return Number(v);
}

export function num(p: Parsed, name: string, dflt: number, min: number, max: number): number {
  const v = str(p, name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(`--${name}: want a number from ${min} to ${max}, got ${JSON.stringify(v)}`);
  }
  return n;
}

/** A duration flag (core's one syntax: `90s`, `5m`, `1h30m`, `250ms`, `0`) in ms. */
export function duration(p: Parsed, name: string, dflt: number): number {
  const v = str(p, name);
  if (v === undefined) return dflt;
  try {
    return parseDuration(v);
  } catch (e) {
    throw new UsageError(`--${name}: ${(e as Error).message}`);
  }
}

export function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${what}: want one of ${allowed.join('|')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}
