// The controller writes core's one log shape (api/log.ts: JSON lines of time, level, msg and
// fields) to stderr.
import { createLogger, type LogFields, type Logger, type LogLevel } from '@claimkit/core';

export { LOG_LEVELS, type Logger, type LogLevel, silentLogger } from '@claimkit/core';

const stderrLine = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** core's JSON logger on stderr, or on `write` (which gets each line without its newline). */
export function jsonLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = stderrLine,
  fields?: LogFields,
): Logger {
  return createLogger({ level, write, ...(fields ? { fields } : {}) });
}
