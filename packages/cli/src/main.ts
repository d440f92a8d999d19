#!/usr/bin/env node
// claimctl / kubectl-claimkit entry point: wires the process into the command context.
import module from 'node:module';
import { run } from './cli.ts';
import type { ConnectOptions, Ctx } from './context.ts';
import { makeStyle, wantColor } from './output.ts';
import { isPluginCompletion, PLUGIN_BIN, programName } from './program.ts';

// V8 code cache on disk (Node >= 22.1): the Kubernetes client is most of a cluster command's
// start-up, and reading its compiled code back is much faster than compiling it again.
module.enableCompileCache?.();

const env = process.env;
const ctx: Ctx = {
  out: (text) => {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  },
  err: (text) => {
    process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  },
  style: makeStyle(wantColor(process.stdout.isTTY, env)),
  now: () => Date.now(),
  env,
  connect: async (opts: ConnectOptions) => (await import('./cluster.ts')).connectCluster(opts),
  prog: isPluginCompletion(process.argv[1])
    ? `kubectl ${PLUGIN_BIN.slice('kubectl-'.length)}`
    : programName(process.argv[1], process.argv0),
};

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0); // `claimctl get pc | head`
});

// kubectl completes `kubectl claimkit ...` by running kubectl_complete-claimkit ARGS... CUR.
const completing = isPluginCompletion(process.argv[1]);
const code = await run([...(completing ? ['__complete'] : []), ...process.argv.slice(2)], ctx);
process.exitCode = code;
