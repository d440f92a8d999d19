// One options table per binary: each option's name, type, default, environment variable and help,
// from which the parsing, the --help text and the validation all come, so no binary keeps a second
// copy of its flags anywhere. Pure (argv and env are passed in): Node and Deno entries alike.
//
// Usage errors have one wording in every claimkit binary: `<bin>: <problem>; <problem> (see --help)`
// where a problem names its flag first, e.g. `unknown flag --foo` or
// `--sweep-interval: not a duration: "5x" (e.g. 30s, 5m, 1h30m)`.

export type OptionType = 'string' | 'int' | 'bool' | 'duration' | 'list' | 'enum';

export interface OptionSpec {
  type: OptionType;
  /** One sentence (or several lines joined by \n); the default and env var are appended. */
  help: string;
  /** One letter: `-n value`, `-nvalue`, `-n=value`. */
  short?: string;
  /** The value's placeholder in the help (default by type: VALUE, N, DUR, LIST, a|b). */
  arg?: string;
  /** Typed default: int and duration (ms) a number, bool a boolean, list an array, else a string. */
  default?: string | number | boolean | readonly string[];
  /** What the help says instead of the default (one computed at start-up, or "none"). */
  defaultText?: string;
  /** Read when the flag is not given. */
  env?: string;
  /** The accepted values of an enum. */
  values?: readonly string[];
  /** Bounds of an int, or of a duration in ms. */
  min?: number;
  max?: number;
  /** A bool that `--no-<name>` turns off (its default is usually true). */
  negatable?: boolean;
  /** A string or list may be given as "" (default: an empty value is a usage error). */
  allowEmpty?: boolean;
  /**
   * A list given once per item (`--arg a --arg b`), each item as given, commas and all: for values
   * passed through to another program. Without it a list is comma-separated and the last one wins.
   */
  repeatable?: boolean;
  /** A further check of the typed value: the problem, worded after `--name: `, or undefined. */
  validate?: (value: never) => string | undefined;
}

export type OptionTable = Readonly<Record<string, OptionSpec>>;

type ValueOf<S extends OptionSpec> = S['type'] extends 'int' | 'duration'
  ? number
  : S['type'] extends 'bool'
    ? boolean
    : S['type'] extends 'list'
      ? string[]
      : S['type'] extends 'enum'
        ? S extends { values: readonly (infer V)[] }
          ? V
          : string
        : string;

/** The typed values of a table: an option without a default (and not a bool) may be undefined. */
export type OptionValues<T extends OptionTable> = {
  -readonly [K in keyof T]: T[K] extends { default: unknown }
    ? ValueOf<T[K]>
    : T[K]['type'] extends 'bool' | 'list'
      ? ValueOf<T[K]>
      : ValueOf<T[K]> | undefined;
};

/** `max-concurrency` -> `maxConcurrency`: an option's name as a program's property. */
type CamelName<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<CamelName<T>>}` : S;

/** A table's typed values under camelCase names: the type a binary's config is (no hand-written copy). */
export type CamelValues<T extends OptionTable> = {
  [K in keyof OptionValues<T> as CamelName<K & string>]: OptionValues<T>[K];
};

/** The parsed values under camelCase names (durations stay in ms); unset options are left out. */
export function camelValues<T extends OptionTable>(values: OptionValues<T>): CamelValues<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v !== undefined) out[k.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())] = v;
  }
  return out as CamelValues<T>;
}

/** Declares a table, keeping its literal types (enum values, which options have defaults). */
export function defineOptions<const T extends OptionTable>(table: T): T {
  return table;
}

/** Every problem with a command line, one line: problems joined by `; `. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly problems: readonly string[];
  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.join('; '));
    this.problems = list;
  }
}

/** The line a binary prints for a usage error (then exits 2). `hint` names the help to read. */
export function usageLine(bin: string, err: UsageError | string, hint = '--help'): string {
  const msg = typeof err === 'string' ? err : err.message;
  return `${bin}: ${msg.split('\n')[0]} (see ${hint})`;
}

// --- durations ----------------------------------------------------------------------------------

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_EXAMPLES = 'e.g. 30s, 5m, 1h30m';

/**
 * Go-style durations (as kubectl takes them): `300ms`, `1.5s`, `2m`, `1h30m`, `1d`; a plain number
 * is seconds (`15`, `0`). Returns ms; throws `not a duration: "5x" (e.g. 30s, 5m, 1h30m)`.
 */
export function parseDuration(s: string): number {
  const t = s.trim();
  if (/^\d+(?:\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  let total = 0;
  let at = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) {
    if (m.index !== at) break;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    at += m[0].length;
  }
  if (t === '' || at !== t.length)
    throw new Error(`not a duration: ${JSON.stringify(s)} (${DURATION_EXAMPLES})`);
  return Math.round(total);
}

/** ms as the shortest duration text parseDuration reads back: 30s, 10m, 1h30m, 500ms, 0. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  let rest = Math.round(ms);
  let out = '';
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return out;
}

// --- tokenizing ----------------------------------------------------------------------------------

export interface Tokens {
  /** Raw values by option name (bools true/false, others the text as given; the last one wins). */
  flags: Record<string, string | boolean>;
  /** Every value of a repeatable option, in order. */
  repeated: Record<string, string[]>;
  positionals: string[];
  help: boolean;
  problems: string[];
}

/**
 * Splits argv by a table's names and types (kubectl style): `--name value`, `--name=value`,
 * `-n value`, `-nvalue`, `-n=value`, bools as `--flag`, `--flag=false` or `--no-flag` (negatable),
 * `--` ends the flags. `-h`/`--help` are always known. Problems are collected, not thrown.
 */
export function tokenize(
  table: Readonly<Record<string, Pick<OptionSpec, 'type' | 'short' | 'negatable' | 'repeatable'>>>,
  argv: readonly string[],
  opts: { positionals?: boolean } = {},
): Tokens {
  const byShort = new Map<string, string>();
  for (const [name, s] of Object.entries(table)) if (s.short) byShort.set(s.short, name);
  const out: Tokens = { flags: {}, repeated: {}, positionals: [], help: false, problems: [] };
  const positional = (a: string) => {
    if (opts.positionals) out.positionals.push(a);
    else out.problems.push(`unexpected argument ${JSON.stringify(a)}`);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      for (const p of argv.slice(i + 1)) positional(p);
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    let shown: string;
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      inline = eq < 0 ? undefined : a.slice(eq + 1);
      shown = `--${name}`;
    } else if (a.startsWith('-') && a.length > 1 && !/^-\d/.test(a)) {
      shown = `-${a[1]}`;
      name = a[1] === 'h' && !byShort.has('h') ? 'help' : byShort.get(a[1]!);
      if (a.length > 2) inline = a[2] === '=' ? a.slice(3) : a.slice(2);
    } else {
      positional(a);
      continue;
    }
    if (name === 'help' && !table.help) {
      out.help = true;
      continue;
    }
    let spec = name === undefined ? undefined : table[name];
    let negated = false;
    if (!spec && name?.startsWith('no-') && table[name.slice(3)]?.negatable) {
      name = name.slice(3);
      spec = table[name];
      negated = true;
    }
    if (!spec || name === undefined) {
      out.problems.push(`unknown flag ${shown}`);
      continue;
    }
    if (spec.type === 'bool') {
      if (negated && inline !== undefined) out.problems.push(`${shown}: takes no value`);
      else if (inline === undefined) out.flags[name] = !negated;
      else if (inline === 'true' || inline === 'false') out.flags[name] = inline === 'true';
      else out.problems.push(`${shown}: want true or false, got ${JSON.stringify(inline)}`);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) out.problems.push(`${shown}: needs a value`);
    else {
      out.flags[name] = value;
      if (spec.repeatable) out.repeated[name] = [...(out.repeated[name] ?? []), value];
    }
  }
  return out;
}

// --- typed parsing --------------------------------------------------------------------------------

/** A repeatable list's value: its items as given. */
function typedItems(spec: OptionSpec, items: readonly string[]): { value?: unknown; problem?: string } {
  if (items.includes('') && !spec.allowEmpty) return { problem: 'must not be empty' };
  return { value: [...items] };
}

function typed(spec: OptionSpec, raw: string | boolean): { value?: unknown; problem?: string } {
  if (spec.type === 'bool') {
    if (typeof raw === 'boolean') return { value: raw };
    if (/^(true|1)$/i.test(raw)) return { value: true };
    if (/^(false|0|)$/i.test(raw)) return { value: false };
    return { problem: `want true or false, got ${JSON.stringify(raw)}` };
  }
  const text = String(raw);
  if (text === '' && !spec.allowEmpty) return { problem: 'must not be empty' };
  switch (spec.type) {
    case 'int': {
      const n = Number(text);
      const { min, max } = spec;
      const ok =
        /^-?\d+$/.test(text.trim()) && (min === undefined || n >= min) && (max === undefined || n <= max);
      if (ok) return { value: n };
      const want =
        min !== undefined && max !== undefined
          ? `an integer from ${min} to ${max}`
          : min !== undefined
            ? `an integer >= ${min}`
            : max !== undefined
              ? `an integer <= ${max}`
              : 'an integer';
      return { problem: `want ${want}, got ${JSON.stringify(text)}` };
    }
    case 'duration': {
      let ms: number;
      try {
        ms = parseDuration(text);
      } catch (e) {
        return { problem: (e as Error).message };
      }
      if (spec.min !== undefined && ms < spec.min)
        return { problem: `must be at least ${formatDuration(spec.min)}` };
      if (spec.max !== undefined && ms > spec.max)
        return { problem: `must be at most ${formatDuration(spec.max)}` };
      return { value: ms };
    }
    case 'enum':
      if (spec.values?.includes(text)) return { value: text };
      return { problem: `want one of ${(spec.values ?? []).join('|')}, got ${JSON.stringify(text)}` };
    case 'list':
      return {
        value: text
          .split(',')
          .map((x) => x.trim())
          .filter((x) => x !== ''),
      };
    default:
      return { value: text };
  }
}

export interface ParsedOptions<T extends OptionTable> {
  values: OptionValues<T>;
  /** The options set on the command line (not by the environment or their default). */
  given: Set<keyof T & string>;
  positionals: string[];
  /** -h/--help was given: problems are not reported (help answers whatever else is wrong). */
  help: boolean;
}

export interface ParseOptionsOptions<T extends OptionTable> {
  /** Accept positional arguments (default: each is a problem). */
  positionals?: boolean;
  /** Rules across options (one flag only with another, one required): their problems. */
  checks?: (values: OptionValues<T>, given: Set<keyof T & string>) => (string | undefined)[];
}

/**
 * The table's typed values from argv, then the environment, then the defaults. Every problem found
 * is in the one UsageError thrown (one line); with --help nothing is thrown.
 */
export function parseOptions<T extends OptionTable>(
  table: T,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
  opts: ParseOptionsOptions<T> = {},
): ParsedOptions<T> {
  const tokens = tokenize(table, argv, opts);
  const problems = [...tokens.problems];
  const values: Record<string, unknown> = {};
  const given = new Set<keyof T & string>();
  for (const [name, spec] of Object.entries(table)) {
    let raw: string | boolean | undefined = tokens.flags[name];
    let from = `--${name}`;
    if (raw === undefined && spec.env !== undefined && env[spec.env] !== undefined) {
      raw = env[spec.env]!;
      from = `$${spec.env} (--${name})`;
    }
    if (raw !== undefined) {
      // From the environment a repeatable list is one item.
      const r =
        spec.type === 'list' && spec.repeatable
          ? typedItems(spec, tokens.repeated[name] ?? [String(raw)])
          : typed(spec, raw);
      const problem =
        r.problem ?? (spec.validate as ((v: unknown) => string | undefined) | undefined)?.(r.value);
      if (problem === undefined) {
        values[name] = r.value;
        if (name in tokens.flags) given.add(name as keyof T & string);
        continue;
      }
      problems.push(`${from}: ${problem}`);
    }
    values[name] =
      spec.default !== undefined
        ? Array.isArray(spec.default)
          ? [...spec.default]
          : spec.default
        : spec.type === 'bool'
          ? false
          : spec.type === 'list'
            ? []
            : undefined;
  }
  const parsed = {
    values: values as OptionValues<T>,
    given,
    positionals: tokens.positionals,
    help: tokens.help,
  };
  if (tokens.help) return parsed;
  if (problems.length === 0 && opts.checks)
    for (const p of opts.checks(parsed.values, given)) if (p !== undefined) problems.push(p);
  if (problems.length > 0) throw new UsageError(problems);
  return parsed;
}

// --- help ----------------------------------------------------------------------------------------

const DEFAULT_ARG: Record<OptionType, string> = {
  string: 'VALUE',
  int: 'N',
  bool: '',
  duration: 'DUR',
  list: 'LIST',
  enum: '',
};

function defaultText(spec: OptionSpec): string | undefined {
  if (spec.defaultText !== undefined) return spec.defaultText;
  const d = spec.default;
  if (d === undefined) return spec.type === 'bool' ? 'false' : undefined;
  if (spec.type === 'duration' && typeof d === 'number') return formatDuration(d);
  if (Array.isArray(d)) return d.length > 0 ? d.join(',') : 'none';
  return String(d);
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (const word of para.split(' ')) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line);
  }
  return lines;
}

export interface HelpTextOptions {
  /** The first lines, e.g. `usage: claimkit-controller [flags]`. */
  usage: string;
  /** Lines after the flags. */
  footer?: string;
}

/** The --help text of a table: usage, one entry per option (with env var and default), footer. */
/** The --help text of a table: usage, one entry per option (with env var and default), footer. */
export function helpText(table: OptionTable, o: HelpTextOptions): string {
  const lines = [o.usage, optionLines(table, { help: true })];
  if (o.footer) lines.push(o.footer.replace(/\n$/, ''));
  return `${lines.join('\n')}\n`;
}

/**
 * A table's entries as help lines (no trailing newline), for a help text written around them (a
 * command's, which lists its own flags and the shared ones). `col`: where the descriptions start.
 */
export function optionLines(table: OptionTable, o: { help?: boolean; col?: number } = {}): string {
  const entries = Object.entries(table).map(([name, spec]) => {
    const arg = spec.arg ?? (spec.type === 'enum' ? (spec.values ?? []).join('|') : DEFAULT_ARG[spec.type]);
    const long = spec.negatable ? `--[no-]${name}` : `--${name}`;
    const head = `${spec.short ? `-${spec.short}, ` : '    '}${long}${arg ? ` ${arg}` : ''}`;
    const notes = [
      ...(spec.repeatable ? ['repeatable'] : []),
      ...(defaultText(spec) !== undefined ? [`default ${defaultText(spec)}`] : []),
      ...(spec.env ? [`env ${spec.env}`] : []),
    ];
    // The notes wrap as one word: "(default\ntrue)" reads badly.
    const note = notes.length ? ` (${notes.join(', ').replaceAll(' ', '\u0000')})` : '';
    return { head, body: `${spec.help}${note}` };
  });
  if (o.help) entries.push({ head: '-h, --help', body: 'this help' });
  const col = o.col ?? Math.min(30, Math.max(...entries.map((e) => e.head.length)) + 2);
  const lines: string[] = [];
  for (const e of entries) {
    const body = wrap(e.body, 100 - 2 - col);
    if (e.head.length + 2 > col) lines.push(`  ${e.head}`);
    else lines.push(`  ${e.head.padEnd(col)}${body.shift() ?? ''}`);
    for (const b of body) lines.push(`  ${' '.repeat(col)}${b}`);
  }
  return lines.join('\n').replaceAll('\u0000', ' ');
}

export type Startup<C> = { help: string } | { error: string } | { config: C };

/**
 * A binary's start-up decision from its table: --help (print to stdout, exit 0), a usage error
 * (one line on stderr, exit 2) or its configuration. `build` gets the positionals (with
 * `positionals: true`) and may throw a UsageError about them. Other errors are bugs and are thrown.
 */
export function startup<T extends OptionTable, C>(
  bin: string,
  table: T,
  help: HelpTextOptions,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  build: (values: OptionValues<T>, given: Set<keyof T & string>, positionals: string[]) => C,
  opts: ParseOptionsOptions<T> = {},
): Startup<C> {
  try {
    const parsed = parseOptions(table, argv, env, opts);
    if (parsed.help) return { help: helpText(table, help) };
    return { config: build(parsed.values, parsed.given, parsed.positionals) };
  } catch (e) {
    if (e instanceof UsageError) return { error: usageLine(bin, e) };
    throw e;
  }
}

/** Where a binary writes its help and usage errors, and how it exits: Node's `process` is one. */
export interface StartupIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  exit(code: number): never;
}

/**
 * Acts on a start-up decision as every claimkit binary does: the help on stdout (exit 0), the
 * usage error's one line on stderr (exit 2), else the configuration to run with.
 */
export function configOrExit<C>(start: Startup<C>, io: StartupIO): C {
  if ('help' in start) {
    io.stdout.write(start.help);
    return io.exit(0);
  }
  if ('error' in start) {
    io.stderr.write(`${start.error}\n`);
    return io.exit(2);
  }
  return start.config;
}
