// The controller writes core's one log shape (api/log.ts: JSON lines of ts, level, msg and
// fields, or the same keys as logfmt with --log-format text) to stderr.
import { createLogger, type LogFields, type LogFormat, type Logger, type LogLevel } from '@claimkit/core';

export {
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type Logger,
  type LogLevel,
  silentLogger,
} from '@claimkit/core';

const stderrLine = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** core's logger (JSON unless `format` says text) on stderr, or on `write` (each line without its newline). */
export function jsonLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = stderrLine,
  fields?: LogFields,
  format: LogFormat = 'json',
): Logger {
  return createLogger({ level, write, format, ...(fields ? { fields } : {}) });
}
