// The webhook writes core's one log shape (api/log.ts: JSON lines of ts, level, msg and fields, or
// the same keys as logfmt with --log-format text) to stdout through console.log, which Node and
// Deno both have.
import { createLogger, type LogFormat, type Logger, type LogLevel } from '@claimkit/core';

export { LOG_FORMATS, LOG_LEVELS, type Logger, type LogLevel, silentLogger } from '@claimkit/core';

/** core's logger (JSON unless `format` says text) on stdout, or on `write` (each line without its newline). */
export function jsonLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (line) => console.log(line),
  now?: () => number,
  format: LogFormat = 'json',
): Logger {
  return createLogger({ level, write, format, ...(now ? { now } : {}) });
}
