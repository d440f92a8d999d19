// The webhook writes core's one log shape (api/log.ts: JSON lines of time, level, msg and fields)
// to stdout through console.log, which Node and Deno both have.
import { createLogger, type Logger, type LogLevel } from '@claimkit/core';

export { LOG_LEVELS, type Logger, type LogLevel, silentLogger } from '@claimkit/core';

/** core's JSON logger on stdout, or on `write` (which gets each line without its newline). */
export function jsonLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (line) => console.log(line),
  now?: () => number,
): Logger {
  return createLogger({ level, write, ...(now ? { now } : {}) });
}
