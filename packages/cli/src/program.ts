// The name claimctl was run as: `claimctl`, or `kubectl claimkit` when kubectl runs it as the plugin
// kubectl-claimkit (kubectl finds kubectl-<name> on PATH; krew links it there). Help and usage
// errors name the command the user typed, so the examples they show can be pasted back.

export const CLAIMCTL = 'claimctl';

/** The kubectl plugin's executable and the krew plugin name (krew refuses generic ones like `claim`). */
export const PLUGIN_BIN = 'kubectl-claimkit';

/** kubectl's completion helper for the plugin: kubectl_complete-claimkit (kubectl 1.26+ runs it). */
export const PLUGIN_COMPLETE_BIN = `kubectl_complete-${PLUGIN_BIN.slice('kubectl-'.length)}`;

export function isPluginCompletion(path: string | undefined): boolean {
  return (
    (path ?? '')
      .split(/[\\/]/)
      .pop()
      ?.replace(/\.(m?js|ts|exe|cmd)$/, '') === PLUGIN_COMPLETE_BIN
  );
}

/**
 * How the user invoked us, from the entry script's path (argv[1]: the npm bin link, or
 * dist/kubectl-claimkit.js behind a pnpm shim) or else the executable's (argv0: a compiled binary that
 * krew or the user linked). kubectl maps `kubectl-foo-bar` to `kubectl foo bar` ('_' stands for '-').
 */
export function programName(...paths: (string | undefined)[]): string {
  for (const p of paths) {
    const base =
      (p ?? '')
        .split(/[\\/]/)
        .pop()
        ?.replace(/\.(m?js|ts|exe|cmd)$/, '') ?? '';
    if (base.startsWith('kubectl-') && base.length > 'kubectl-'.length) {
      return `kubectl ${base.slice('kubectl-'.length).split('-').join(' ').replaceAll('_', '-')}`;
    }
  }
  return CLAIMCTL;
}

/**
 * A help text or usage line written for `claimctl`, for the program the user ran: every `claimctl`
 * that starts a command line (followed by a space, ':' or a closing quote), not a `claimctl` that is
 * a value (`default claimctl)`, the Event source `claimctl`).
 */
export function asProgram(text: string, prog: string | undefined): string {
  if (!prog || prog === CLAIMCTL) return text;
  return text.replace(/(?<![\w./-])claimctl(?=[ :'])/g, prog);
}
