// `pnpm cluster`'s arguments: a command, each with its own options table (core's) from which its
// parsing, --help and usage errors come. Pure, so it is unit-tested.
import {
  defineOptions,
  type OptionTable,
  type Startup,
  startup,
  UsageError,
  usageLine,
} from '@claimkit/core/options';
import { COMPONENTS, type ComponentName, isComponentName } from '@claimkit/e2e/harness';

const BIN = 'pnpm cluster';

/** What to do. stop, kill, start and restart act on the background cluster, else the newest run. */
export type ClusterCommand =
  | { cmd: 'up'; nodes?: number }
  | { cmd: 'down' | 'status' }
  | { cmd: ComponentCommand; component: ComponentName };

type ComponentCommand = 'stop' | 'kill' | 'start' | 'restart';

const UP_OPTIONS = defineOptions({
  nodes: { type: 'int', min: 1, defaultText: "the e2e harness's", help: 'fake (kwok) nodes' },
});
const NO_OPTIONS = defineOptions({});

/** Each command's table, arguments and summary: its parsing, its help and the list in `--help`. */
const COMMANDS: Record<ClusterCommand['cmd'], { options: OptionTable; args?: 'COMPONENT'; summary: string }> =
  {
    up: {
      options: UP_OPTIONS,
      summary:
        'start a control plane (CRDs only) in the background, or reuse the running one, and print\n`export KUBECONFIG=...` on stdout',
    },
    status: {
      options: NO_OPTIONS,
      summary:
        "list the runs (test runs in progress too), each component's pid and health; exit 1 when one\nis not ready",
    },
    down: {
      options: NO_OPTIONS,
      summary: 'stop the background clusters and clean up what crashed runs left',
    },
    stop: { options: NO_OPTIONS, args: 'COMPONENT', summary: 'stop one component (SIGTERM)' },
    kill: { options: NO_OPTIONS, args: 'COMPONENT', summary: 'stop one component with SIGKILL' },
    start: {
      options: NO_OPTIONS,
      args: 'COMPONENT',
      summary: 'start a stopped component again, waiting until it is healthy',
    },
    restart: {
      options: NO_OPTIONS,
      args: 'COMPONENT',
      summary: 'stop and start one component, waiting until it is healthy again',
    },
  };

/** `items` joined by commas, in lines of at most 98 characters indented by two spaces. */
function listLines(items: readonly string[]): string {
  const lines: string[] = [];
  for (const item of items) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + item.length < 94) lines[lines.length - 1] = `${last}, ${item}`;
    else lines.push(item);
  }
  return lines.map((l) => `  ${l}`).join(',\n');
}

const COMPONENT_HELP = `COMPONENT (of the background cluster, else of the newest run): one of\n${listLines(COMPONENTS)}`;

const isCommand = (s: string): s is ClusterCommand['cmd'] => Object.hasOwn(COMMANDS, s);

const synopsis = (cmd: ClusterCommand['cmd']) =>
  `${BIN} ${cmd}${COMMANDS[cmd].args ? ` ${COMMANDS[cmd].args}` : ''}${Object.keys(COMMANDS[cmd].options).length > 0 ? ' [flags]' : ''}`;

/** `pnpm cluster --help`: the commands, each with its arguments and summary. */
export const CLUSTER_HELP = `usage: ${BIN} COMMAND [flags]

A local control plane for development, in the background (the e2e harness's).

commands:
${(Object.keys(COMMANDS) as ClusterCommand['cmd'][])
  .map((cmd) => `  ${synopsis(cmd)}\n${COMMANDS[cmd].summary.replace(/^/gm, '      ')}`)
  .join('\n')}

${COMPONENT_HELP}

Run '${BIN} COMMAND --help' for a command's help.
`;

/** The one COMPONENT argument of stop, kill, start and restart. */
function componentOf(args: readonly string[]): ComponentName {
  const [name, ...extra] = args;
  if (name === undefined) throw new UsageError(`missing COMPONENT (one of ${COMPONENTS.join(', ')})`);
  if (!isComponentName(name))
    throw new UsageError(`unknown component ${JSON.stringify(name)} (want one of ${COMPONENTS.join(', ')})`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  return name;
}

/**
 * `pnpm cluster`'s start-up decision: a help, one usage-error line (its bin the command, so that
 * "see --help" means that command's), or the command to run.
 */
export function clusterStartup(argv: readonly string[]): Startup<ClusterCommand> {
  const [cmd, ...rest] = argv;
  if (cmd === '-h' || cmd === '--help') return { help: CLUSTER_HELP };
  if (cmd === undefined || !isCommand(cmd)) {
    const problem =
      cmd === undefined
        ? 'missing COMMAND'
        : cmd.startsWith('-')
          ? `the COMMAND comes first, got ${JSON.stringify(cmd)}`
          : `unknown command ${JSON.stringify(cmd)}`;
    return { error: usageLine(BIN, problem) };
  }
  const { options, args, summary } = COMMANDS[cmd];
  const help = {
    usage: `usage: ${synopsis(cmd)}\n\n${summary}${args ? `\n${COMPONENT_HELP}` : ''}\n\nflags:`,
  };
  if (cmd === 'up')
    return startup(`${BIN} up`, UP_OPTIONS, help, rest, {}, (v) => ({
      cmd,
      ...(v.nodes !== undefined ? { nodes: v.nodes } : {}),
    }));
  if (cmd === 'down' || cmd === 'status')
    return startup(`${BIN} ${cmd}`, options, help, rest, {}, () => ({ cmd }));
  return startup(
    `${BIN} ${cmd}`,
    options,
    help,
    rest,
    {},
    (_v, _given, positionals) => ({ cmd, component: componentOf(positionals) }),
    { positionals: true },
  );
}
