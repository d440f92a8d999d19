// Programmatic entry: run claimctl with your own context (output sinks, clock, cluster).
export { HELP, run, VERSION } from './cli.ts';
export type { Connection, ConnectOptions, Ctx } from './context.ts';
export { makeStyle } from './output.ts';
