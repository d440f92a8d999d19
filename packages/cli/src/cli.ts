// The dispatcher: global flags, help, lazy command modules (startup stays fast: nothing heavy is
// imported for --help, and the Kubernetes client only when a command talks to a cluster).
import { optionLines, usageLine } from '@claimkit/core/options';
import { GLOBAL_OPTIONS, UsageError } from './args.ts';
import { COMMAND_SUMMARY } from './command-list.ts';
import type { Ctx } from './context.ts';
import { asProgram, CLAIMCTL, PLUGIN_BIN } from './program.ts';
import { CLAIMKIT_VERSION } from './version.generated.ts';

/** The release's version (its own copy, written by `pnpm manifests`: --help and --version import nothing of core). */
export const VERSION = CLAIMKIT_VERSION;

/** The top-level help, naming the program as the user ran it (`claimctl` or `kubectl claimkit`). */
export function helpText(prog: string = CLAIMCTL): string {
  const also =
    prog === CLAIMCTL
      ? `also: kubectl ${PLUGIN_BIN.slice('kubectl-'.length)} ...`
      : 'claimctl, as a kubectl plugin';
  const commands = COMMAND_SUMMARY.map((c) => `  ${`${c.name} ${c.args}`.trimEnd().padEnd(28)}${c.summary}`);
  return asProgram(
    `claimctl: inspect, repair and drive claimkit claims (${also})

Usage:
  claimctl COMMAND [ARGS] [flags]

Commands:
${commands.join('\n')}

Run 'claimctl COMMAND --help' for a command's flags. Global flags:
${optionLines(GLOBAL_OPTIONS, { help: true, col: 28 })}

Exit status: 0 ok, 1 problems found (doctor, simulate) or not acquired, 2 usage or API error,
3 superseded capture token.`,
    prog,
  );
}

export const HELP = helpText();

type Runner = (ctx: Ctx, argv: string[]) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Runner>> = {
  get: async () => (await import('./commands/get.ts')).runGet,
  describe: async () => (await import('./commands/describe.ts')).runDescribe,
  doctor: async () => (await import('./commands/doctor.ts')).runDoctorCommand,
  capture: async () => (await import('./commands/capture.ts')).runCapture,
  claim: async () => (await import('./commands/claim.ts')).runClaim,
  simulate: async () => (await import('./commands/simulate.ts')).runSimulate,
  manifests: async () => (await import('./manifests.ts')).runManifests,
  completion: async () => (await import('./completion.ts')).runCompletion,
  // Hidden: what kubectl_complete-claimkit runs for kubectl's completion of `kubectl claimkit`.
  __complete: async () => (await import('./completion.ts')).runComplete,
};

function describeError(e: unknown): string {
  const err = e as { name?: string; reason?: string; code?: number; message?: string };
  if (err?.name === 'ApiError' && err.reason) return `Error from server (${err.reason}): ${err.message}`;
  return `error: ${err?.message ?? String(e)}`;
}

export async function run(argv: string[], ctx: Ctx): Promise<number> {
  const prog = ctx.prog ?? CLAIMCTL;
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  // The command is the first argument that is not a global flag.
  const i = argv.findIndex((a) => !['-v', '--verbose'].includes(a));
  const first = i < 0 ? undefined : argv[i];
  const rest = i < 0 ? [] : argv.slice(i + 1).filter((a) => a !== '--verbose' && a !== '-v');
  try {
    if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
      if (first === 'help' && rest[0] && COMMANDS[rest[0]]) {
        return await (await COMMANDS[rest[0]]!())(ctx, ['--help']);
      }
      ctx.out(helpText(prog));
      return 0;
    }
    if (first === 'version' || first === '--version') {
      ctx.out(`claimctl ${VERSION}`);
      return 0;
    }
    if (first.startsWith('-')) {
      const known = Object.values(GLOBAL_OPTIONS).some((f) => `-${f.short}` === first) || first === '--help';
      throw new UsageError(known ? `${first} goes after the command` : `unknown flag ${first.split('=')[0]}`);
    }
    const load = COMMANDS[first];
    if (!load) throw new UsageError(`unknown command ${JSON.stringify(first)}`);
    return await (await load())(ctx, rest);
  } catch (e) {
    if (e instanceof UsageError) {
      // The one usage-error wording of every claimkit binary, pointing at the help that applies.
      const hint = first && COMMANDS[first] ? `${prog} ${first} --help` : '--help';
      ctx.err(asProgram(usageLine(prog, e, hint), prog));
      return 2;
    }
    ctx.err(describeError(e));
    if (verbose && e instanceof Error && e.stack) ctx.err(e.stack);
    return 2;
  }
}
