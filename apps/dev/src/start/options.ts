// `npm start`'s options: one table (core's) from which the parsing, the default, --help and the
// usage errors come. CLAIMKIT_LOG_LEVEL, the way it was always set, is --log-level's variable.
import { LOG_LEVELS, type LogLevel } from '@claimkit/controller';
import { defineOptions, type Startup, startup } from '@claimkit/core/options';

const START_OPTIONS = defineOptions({
  'log-level': {
    type: 'enum',
    values: LOG_LEVELS,
    default: 'warn',
    env: 'CLAIMKIT_LOG_LEVEL',
    help: 'the least level the controller and the webhook log (stderr)',
  },
});

const START_HELP = {
  usage: `usage: npm start [-- flags]

A local claimkit installation to try things on: a control plane with the CRDs, the RBAC and the
admission policies of a real install, the controller, the webhook and the capture agent in this
process, and deploy/examples (apps/dev/README.md). SIGINT, SIGTERM or SIGHUP stops everything.

flags:`,
};

export interface StartOptions {
  logLevel: LogLevel;
}

/** `npm start`'s start-up decision: its help, one usage-error line, or its options. */
export function startStartup(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Startup<StartOptions> {
  return startup('npm start', START_OPTIONS, START_HELP, argv, env, (v) => ({ logLevel: v['log-level'] }));
}
