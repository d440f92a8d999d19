#!/usr/bin/env node
// claimctl / kubectl-claim entry point: wires the process into the command context.
import { run } from './cli.ts';
import type { ConnectOptions, Ctx } from './context.ts';
import { makeStyle, wantColor } from './output.ts';

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
};

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0); // `claimctl get pc | head`
});

const code = await run(process.argv.slice(2), ctx);
process.exitCode = code;
