// Argument parsing, kubectl style (`--flag value`, `--flag=value`, `-n value`, `-nvalue`, booleans,
// `--` ends flags), by core's options tables (@claimkit/core/options) as in every claimkit binary:
// each command's table gives its parsing, typed values and defaults, its flag help and its shell
// completion. Errors are UsageError: one line, exit code 2.
import {
  defineOptions,
  type OptionTable,
  type OptionValues,
  parseOptions,
  tokenize,
  UsageError,
} from '@claimkit/core/options';

export { UsageError } from '@claimkit/core/options';

/** What every command takes besides -h/--help (which core's parser knows without a table entry). */
export const GLOBAL_OPTIONS = defineOptions({
  verbose: { type: 'bool', short: 'v', help: 'show stack traces of errors' },
});

export interface CommandLine<T extends OptionTable> {
  values: OptionValues<typeof GLOBAL_OPTIONS & T>;
  positionals: string[];
}

/**
 * A command's argv by its table (and the global one): typed values with their defaults, and the
 * positionals; undefined when -h/--help asks for the help. An unknown flag is an error even beside
 * --help, a bad value is not (the help answers it). An empty value (`-n ""`) reaches the command,
 * which says what it means there (`-n/--namespace must not be empty`, `capture acquire needs --pod`).
 */
export function parseCommand<T extends OptionTable>(
  table: T,
  argv: readonly string[],
): CommandLine<T> | undefined {
  const all = Object.fromEntries(
    Object.entries({ ...GLOBAL_OPTIONS, ...table }).map(([name, spec]) => [
      name,
      { ...spec, allowEmpty: true },
    ]),
  ) as typeof GLOBAL_OPTIONS & T;
  const tokens = tokenize(all, argv, { positionals: true });
  if (tokens.problems.length > 0) throw new UsageError(tokens.problems);
  if (tokens.help) return undefined;
  const { values, positionals } = parseOptions(all, argv, {}, { positionals: true });
  return { values, positionals };
}

/** A positional that must be one of a few words (`capture OP`, `claim migrate`). */
export function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${what}: want one of ${allowed.join('|')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}
