// The one log shape of every claimkit process: one JSON object per line (the default),
//   {"ts":"2026-01-01T00:00:00.000Z","level":"info","msg":"caches synced",...fields}
// (`ts`, `level`, `msg`: the keys people grep in controller-runtime's and klog's JSON), or the same
// keys as logfmt for a person at a terminal (`--log-format text`):
//   ts=2026-01-01T00:00:00.000Z level=info msg="caches synced" objects="{\"Pod\":3}"
// Runtime-free: the process says where lines go (the controller: stderr, the webhook: stdout).

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How a line is written: one JSON object (default), or logfmt `key=value` pairs. */
export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line (a call's own fields win). */
  with(fields: LogFields): Logger;
}

export interface LoggerOptions {
  /** Lines below this level are dropped. Default info. */
  level?: LogLevel;
  /** Receives each line, without a trailing newline. */
  write: (line: string) => void;
  /** Wall clock for `ts` (ms since the epoch). Default Date.now. */
  now?: () => number;
  /** Default json. */
  format?: LogFormat;
  /** Fields on every line. */
  fields?: LogFields;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export function isLogLevel(s: string): s is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(s);
}

/** The level named by `s`, or an error naming the accepted levels. */
export function parseLogLevel(s: string): LogLevel {
  if (isLogLevel(s)) return s;
  throw new Error(`invalid log level ${JSON.stringify(s)}: want one of ${LOG_LEVELS.join('|')}`);
}

// Errors as their message (JSON.stringify would write {}), bigints as text (it would throw).
function jsonValue(_key: string, v: unknown): unknown {
  if (v instanceof Error) return v.message;
  if (typeof v === 'bigint') return v.toString();
  return v;
}

/** One JSON line: ts, level and msg first and never overridden by a field of the same name. */
export function formatLogLine(time: number, level: LogLevel, msg: string, fields: LogFields): string {
  const head = { ts: new Date(time).toISOString(), level, msg };
  try {
    return JSON.stringify({ ...head, ...fields, ...head }, jsonValue);
  } catch (e) {
    // A cyclic field: keep the message, say why the fields are missing.
    return JSON.stringify({ ...head, logError: `fields not serialisable: ${(e as Error).message}` });
  }
}

// A logfmt value: bare when it has no space, quote, `=` or control character, else a JSON string.
function logfmtValue(v: unknown): string {
  let text: string;
  try {
    const n = jsonValue('', v);
    text = typeof n === 'string' ? n : (JSON.stringify(n, jsonValue) ?? String(n));
  } catch {
    text = '[not serialisable]';
  }
  return text === '' || /[\s"=\\]|\p{Cc}/u.test(text) ? JSON.stringify(text) : text;
}

/** One logfmt line with the JSON line's keys in the same order (ts, level, msg, then the fields). */
export function formatTextLine(time: number, level: LogLevel, msg: string, fields: LogFields): string {
  const head = { ts: new Date(time).toISOString(), level, msg };
  return Object.entries({ ...head, ...fields, ...head })
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${logfmtValue(v)}`)
    .join(' ');
}

export function createLogger(opts: LoggerOptions): Logger {
  const min = RANK[opts.level ?? 'info'];
  const now = opts.now ?? Date.now;
  const base = opts.fields ?? {};
  const format = opts.format === 'text' ? formatTextLine : formatLogLine;
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (RANK[level] < min) return;
    opts.write(format(now(), level, msg, fields ? { ...base, ...fields } : base));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => createLogger({ ...opts, fields: { ...base, ...fields } }),
  };
}

export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  with: () => silentLogger,
};
